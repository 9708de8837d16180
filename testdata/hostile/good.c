/*
 * good: the well-behaved plugin of the hostile corpus. It shares a server
 * with the hostile plugins; after each hostile call the tests check that
 * it still answers exactly, and the load test measures its latency.
 *
 *   echo {text}   returns text as one text block (cheap: the load test's call)
 *   counter       increments a key in its own kv namespace and returns it
 *   readfile      returns /data/ok.txt from its granted mount
 */
#define WASMCP_IMPLEMENTATION
#include "wasmcp.h"

#include <stdio.h>

static void echo(wasmcp_ctx *ctx, wasmcp_json args) {
	size_t n;
	const char *text = wasmcp_arg_str_required(ctx, args, "text", &n);
	if (!text) return;
	wasmcp_text(ctx, text, n);
}

static void counter(wasmcp_ctx *ctx, wasmcp_json args) {
	(void)args;
	const char *v;
	size_t n;
	int64_t count = 0;
	int r = wasmcp_kv_get(ctx, "count", &v, &n);
	if (r < 0) {
		wasmcp_tool_error_host(ctx, r);
		return;
	}
	if (r == 1) {
		count = strtoll(v, NULL, 10);
	}
	count++;
	char buf[32];
	int len = snprintf(buf, sizeof buf, "%lld", (long long)count);
	if ((r = wasmcp_kv_set(ctx, "count", buf, (size_t)len, 0)) < 0) {
		wasmcp_tool_error_host(ctx, r);
		return;
	}
	wasmcp_text(ctx, buf, (size_t)len);
}

static void readfile(wasmcp_ctx *ctx, wasmcp_json args) {
	(void)args;
	FILE *f = fopen("/data/ok.txt", "r");
	if (!f) {
		wasmcp_tool_error(ctx, "cannot open /data/ok.txt");
		return;
	}
	char buf[256];
	size_t n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	wasmcp_text(ctx, buf, n);
}

static const wasmcp_tool tools[] = {
	{"echo", "Returns its text argument unchanged.",
	 "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},\"required\":[\"text\"]}",
	 NULL, NULL, echo},
	{"counter", "Counts calls in kv.", NULL, NULL, NULL, counter},
	{"readfile", "Reads /data/ok.txt.", NULL, NULL, NULL, readfile},
};

static const wasmcp_plugin plugin = {
	.name = "good", .version = "1.0.0", .tools = tools, .n_tools = WASMCP_COUNT(tools),
	.capabilities = "{\"kv\":true,\"fs\":[\"/data\"]}",
};
WASMCP_PLUGIN(plugin)
