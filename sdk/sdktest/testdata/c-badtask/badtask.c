/* SDK test fixture (C): a task_tools entry that names no tool, which must
 * make wasmcp/describe fail with a clear error (sdk/sdktest TestTaskSupport). */
#define WASMCP_IMPLEMENTATION
#include "wasmcp.h"

static void t_echo(wasmcp_ctx *ctx, wasmcp_json args) {
	(void)args;
	wasmcp_textz(ctx, "echo");
}

static const wasmcp_tool tools[] = {
	{"echo", "Echo", NULL, NULL, NULL, t_echo},
};
static const wasmcp_task_tool task_tools[] = {
	{"echo", "optional"},
	{"nope", "optional"},
};
static const wasmcp_plugin plugin = {
	.name = "badtask",
	.version = "0.0.1",
	.tools = tools,
	.n_tools = WASMCP_COUNT(tools),
	.task_tools = task_tools,
	.n_task_tools = WASMCP_COUNT(task_tools),
};

WASMCP_PLUGIN(plugin)
