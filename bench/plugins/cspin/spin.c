/*
 * cspin: a runaway plugin for the benchmark. "spin" never returns; the
 * host must stop it at its deadline.
 */
#define WASMCP_IMPLEMENTATION
#include "wasmcp.h"

static volatile unsigned long long counter;

static void spin(wasmcp_ctx *ctx, wasmcp_json args) {
	(void)args;
	for (;;)
		counter++;
	wasmcp_textz(ctx, "unreachable");
}

static const wasmcp_tool tools[] = {
	{"spin", "Loops forever.", "{\"type\":\"object\"}", NULL, NULL, spin},
};

static const wasmcp_plugin plugin = {
	.name = "cspin", .version = "1.0.0", .tools = tools, .n_tools = WASMCP_COUNT(tools),
};
WASMCP_PLUGIN(plugin)
