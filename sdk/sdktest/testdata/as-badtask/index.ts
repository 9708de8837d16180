// SDK test fixture (AssemblyScript): a task support value that is not one
// of MCP's, which must make wasmcp/describe fail with a clear error
// (sdk/sdktest TestTaskSupportBadEntry).
import { Plugin, Request, ToolResult, JSONValue } from "../../../assemblyscript/assembly";

function echo(req: Request, args: JSONValue): ToolResult {
  return ToolResult.text("echo");
}

const plugin = new Plugin("badtask", "0.0.1");
plugin.tool("echo", "Echo", "", echo);
plugin.taskSupport("echo", "sometimes");

export function wasmcp_call(): u32 {
  return plugin.run();
}
