/*
 * memhog: a C plugin that runs out of memory, on the heap and on the
 * shadow stack.
 *
 *   malloc_null   malloc 1 MiB blocks (touching each) until malloc returns
 *                 NULL, then answer how many it got: the limit is reached
 *                 and the plugin copes (a normal result)
 *   abort_oom     the same, then abort(): out of memory past the limit
 *   stack_smash   unbounded recursion with 16 KiB frames: the shadow stack
 *                 runs past address 0 (--stack-first makes that a trap)
 */
#define WASMCP_IMPLEMENTATION
#include "wasmcp.h"

#include <stdlib.h>
#include <string.h>

/* kept chains the blocks grab_all gets, so that the compiler cannot drop
 * the allocations (an unused malloc is assumed to succeed). */
static void *volatile kept;

static size_t grab_all(void) {
	size_t n = 0;
	for (;;) {
		char *p = malloc(1 << 20);
		if (!p) {
			return n;
		}
		memset(p, 0xAB, 1 << 20);
		*(void **)p = kept;
		kept = p;
		n++;
	}
}

static void malloc_null(wasmcp_ctx *ctx, wasmcp_json args) {
	(void)args;
	size_t n = grab_all();
	wasmcp_textf(ctx, "malloc returned NULL after %zu MiB", n);
}

static void abort_oom(wasmcp_ctx *ctx, wasmcp_json args) {
	(void)ctx;
	(void)args;
	grab_all();
	abort();
}

static volatile int sink;
static volatile int bottom = 1 << 30; /* never reached; keeps clang from proving the recursion infinite */

static int smash(int depth) {
	volatile char frame[16 << 10];
	if (depth == bottom) {
		return 0;
	}
	frame[0] = (char)depth;
	frame[sizeof frame - 1] = (char)depth;
	return smash(depth + 1) + frame[0] + frame[sizeof frame - 1];
}

static void stack_smash(wasmcp_ctx *ctx, wasmcp_json args) {
	(void)args;
	sink = smash(0);
	wasmcp_textf(ctx, "survived %d", sink);
}

static const wasmcp_tool tools[] = {
	{"malloc_null", "malloc until NULL", NULL, NULL, NULL, malloc_null},
	{"abort_oom", "malloc until NULL, then abort", NULL, NULL, NULL, abort_oom},
	{"stack_smash", "overflow the shadow stack", NULL, NULL, NULL, stack_smash},
};

static const wasmcp_plugin plugin = {
	.name = "memhog", .version = "1.0.0", .tools = tools, .n_tools = WASMCP_COUNT(tools),
};
WASMCP_PLUGIN(plugin)
