// clang: -O0 -gline-tables-only
/*
 * debugtrap: traps in a named function, built with its name section and
 * line table (the flags above replace -O2 and --strip-all), so that the
 * trap's stack trace in the server log names the function and its
 * file:line through instrumentation, while the client sees only the
 * short message.
 *
 *   load   loads from an address past the end of memory (in read_past_end)
 *   abort  calls __builtin_trap (unreachable, in give_up)
 */
#define WASMCP_IMPLEMENTATION
#include "wasmcp.h"

__attribute__((noinline)) static int read_past_end(volatile int *p) {
	return *p; /* debugtrap.c:16: the out-of-bounds load */
}

__attribute__((noinline)) static void give_up(void) {
	__builtin_trap(); /* debugtrap.c:20 */
}

static void load(wasmcp_ctx *ctx, wasmcp_json args) {
	(void)args;
	int v = read_past_end((volatile int *)0xfffffff0);
	wasmcp_text(ctx, (const char *)&v, 1);
}

static void abort_(wasmcp_ctx *ctx, wasmcp_json args) {
	(void)ctx;
	(void)args;
	give_up();
}

static const wasmcp_tool tools[] = {
	{"load", "Loads past the end of memory.", NULL, NULL, NULL, load},
	{"abort", "Executes unreachable.", NULL, NULL, NULL, abort_},
};

static const wasmcp_plugin plugin = {
	.name = "debugtrap", .version = "1.0.0", .tools = tools, .n_tools = WASMCP_COUNT(tools),
};
WASMCP_PLUGIN(plugin)
