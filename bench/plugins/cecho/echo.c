/*
 * cecho: the benchmark's trivial tool in C. "echo" returns its "text"
 * argument as one text content block, the same tool that
 * bench/cmd/nativeserver serves with the official Go SDK.
 */
#define WASMCP_IMPLEMENTATION
#include "wasmcp.h"

static void echo(wasmcp_ctx *ctx, wasmcp_json args) {
	size_t n;
	const char *text = wasmcp_arg_str_required(ctx, args, "text", &n);
	if (!text) return;
	wasmcp_text(ctx, text, n);
}

static const wasmcp_tool tools[] = {
	{"echo", "Returns its text argument unchanged.",
	 "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},\"required\":[\"text\"]}",
	 NULL, NULL, echo},
};

static const wasmcp_plugin plugin = {
	.name = "cecho", .version = "1.0.0", .tools = tools, .n_tools = WASMCP_COUNT(tools),
};
WASMCP_PLUGIN(plugin)
