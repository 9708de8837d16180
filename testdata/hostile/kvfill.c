/*
 * kvfill: exhausts its kv quota.
 *
 *   fill {size}   kv/set "k<i>" with values of size bytes until the host
 *                 refuses: "stored N keys, then errno E (<name>)"
 *   big {size}    one kv/set of a value of size bytes: "ok" or "errno E (<name>)"
 */
#define WASMCP_IMPLEMENTATION
#include "wasmcp.h"

#include <stdio.h>
#include <string.h>

static char *value_of(wasmcp_ctx *ctx, wasmcp_json args, size_t *size) {
	int64_t n = 0;
	if (wasmcp_arg_int(args, "size", &n) != 0 || n < 0 || n > (64 << 20)) {
		wasmcp_tool_error(ctx, "\"size\" must be an integer in [0, 64 MiB]");
		return NULL;
	}
	char *v = wasmcp_alloc((size_t)n + 1);
	if (!v) {
		wasmcp_tool_error(ctx, "out of memory");
		return NULL;
	}
	memset(v, 'v', (size_t)n);
	v[n] = 0;
	*size = (size_t)n;
	return v;
}

static void fill(wasmcp_ctx *ctx, wasmcp_json args) {
	size_t size;
	char *v = value_of(ctx, args, &size);
	if (!v) {
		return;
	}
	for (long i = 0;; i++) {
		char key[32];
		snprintf(key, sizeof key, "k%ld", i);
		int r = wasmcp_kv_set(ctx, key, v, size, 0);
		if (r < 0) {
			wasmcp_textf(ctx, "stored %ld keys, then errno %d (%s)", i, r, wasmcp_strerror(r));
			return;
		}
	}
}

static void big(wasmcp_ctx *ctx, wasmcp_json args) {
	size_t size;
	char *v = value_of(ctx, args, &size);
	if (!v) {
		return;
	}
	int r = wasmcp_kv_set(ctx, "big", v, size, 0);
	if (r < 0) {
		wasmcp_textf(ctx, "errno %d (%s)", r, wasmcp_strerror(r));
		return;
	}
	wasmcp_textz(ctx, "ok");
}

#define SIZE_SCHEMA "{\"type\":\"object\",\"properties\":{\"size\":{\"type\":\"integer\"}},\"required\":[\"size\"]}"

static const wasmcp_tool tools[] = {
	{"fill", "Store keys until the quota refuses", SIZE_SCHEMA, NULL, NULL, fill},
	{"big", "Store one big value", SIZE_SCHEMA, NULL, NULL, big},
};

static const wasmcp_plugin plugin = {
	.name = "kvfill", .version = "1.0.0", .tools = tools, .n_tools = WASMCP_COUNT(tools),
	.capabilities = "{\"kv\":true}",
};
WASMCP_PLUGIN(plugin)
