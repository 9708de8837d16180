// SDK test fixture (AssemblyScript): the same tools as the C and Rust
// fixtures; sdk/sdktest checks all three.
import {
  Plugin, Request, ToolResult, ResourceResult, PromptResult, CompletionResult, InputRequired,
  JSONValue, jobj, jstr, jnum, configGet, kvGet, kvSet, kvList, kvDelete, httpFetch, progress,
  logJSON, log, httpBodyText, notifyListChanged, notifyResourceUpdated, setOutputLimit, Level, RpcError, taskStart,
} from "../../../assemblyscript/assembly";

function echo(req: Request, args: JSONValue): ToolResult {
  const t = args.get("text");
  if (!t.isString) return ToolResult.error("text is required");
  const pv = req.context.get("protocolVersion");
  return ToolResult.text(t.str).withStructured(jobj().set("text", t).set("protocolVersion", pv.isMissing ? JSONValue.missing() : pv));
}

function config(req: Request, args: JSONValue): ToolResult {
  const r = configGet(args.get("key").str);
  if (!r.ok) return ToolResult.hostError(r);
  return ToolResult.text(r.value.str);
}

function kv(req: Request, args: JSONValue): ToolResult {
  const key = args.get("key").str;
  let r = kvSet(key, args.get("value").str, 60);
  if (!r.ok) return ToolResult.hostError(r);
  const got = kvGet(key);
  if (!got.ok) return ToolResult.hostError(got);
  const list = kvList("");
  if (!list.ok) return ToolResult.hostError(list);
  r = kvDelete(key);
  if (!r.ok) return ToolResult.hostError(r);
  const after = kvGet(key);
  if (!after.ok) return ToolResult.hostError(after);
  return ToolResult.text(got.value.str + " keys=" + list.value.get("keys").length.toString() +
    " after_delete=" + (after.value.isString ? "1" : "0"));
}

function http(req: Request, args: JSONValue): ToolResult {
  const r = httpFetch("POST", args.get("url").str, jobj().set("x-test", jstr("1")), "ping");
  if (!r.ok) return ToolResult.hostError(r);
  return ToolResult.text((<i32>r.value.get("status").num).toString() + " " + httpBodyText(r));
}

function notify(req: Request, args: JSONValue): ToolResult {
  log(Level.WARNING, "fast log line");
  let r = progress(1, 2, "half");
  if (r.ok) r = logJSON(Level.INFO, "fixture", jobj().set("k", jnum(1)));
  if (r.ok) r = notifyListChanged("tools");
  if (r.ok) r = notifyResourceUpdated("fixture://static");
  if (!r.ok) return ToolResult.hostError(r);
  return ToolResult.text("ok");
}

function confirm(req: Request, args: JSONValue): ToolResult {
  const answer = req.inputResponse("confirm");
  if (answer.isMissing) {
    const schema = JSONValue.parse("{\"type\":\"object\",\"properties\":{\"ok\":{\"type\":\"boolean\"}}}");
    return ToolResult.inputRequired(new InputRequired().elicit("confirm", "Proceed?", schema).withState("step-1"));
  }
  return ToolResult.text(answer.get("action").str + " after " + req.requestState);
}

function big(req: Request, args: JSONValue): ToolResult {
  const soft = args.get("soft_limit");
  setOutputLimit(soft.isNumber ? <i32>soft.num : 0);
  return ToolResult.text("x".repeat(<i32>args.get("n").num));
}

function rpcError(req: Request, args: JSONValue): ToolResult {
  const r = new ToolResult();
  r.rpc = new RpcError(-32602, "bad thing", jobj().set("why", jstr("test")));
  return r;
}

function roundtrip(req: Request, args: JSONValue): ToolResult {
  return ToolResult.text("ok").withStructured(jobj().set("numbers", args.get("numbers")).set("strings", args.get("strings")));
}

// A tool that may run as a task: says so to the host, then answers.
function task(req: Request, args: JSONValue): ToolResult {
  const r = taskStart();
  if (!r.ok) return ToolResult.hostError(r);
  return ToolResult.text("task done");
}

function rStatic(req: Request, uri: string): ResourceResult {
  return ResourceResult.text(uri, "text/plain", "static text");
}

function rItem(req: Request, uri: string): ResourceResult {
  const id = req.variable("id");
  return ResourceResult.text(uri, "text/plain", "item " + id)
    .addBlob(uri, "application/octet-stream", Uint8Array.wrap(String.UTF8.encode(id)));
}

function greet(req: Request, args: JSONValue): PromptResult {
  const n = args.get("name");
  const r = new PromptResult();
  r.description = "A greeting";
  return r.message("user", "Hello, " + (n.isString ? n.str : "world") + "!");
}

function complete(req: Request): CompletionResult {
  const prefix = req.params.get("argument").get("value").str;
  const words = ["alpha", "beta", "gamma", "alphabet"];
  const r = new CompletionResult();
  for (let i = 0; i < words.length; i++) if (words[i].startsWith(prefix)) r.values.push(words[i]);
  r.total = r.values.length;
  return r;
}

const OBJ = "{\"type\":\"object\"}";
const plugin = new Plugin("fixture", "0.0.1", "SDK test fixture");
plugin.tool("echo", "Echo text", "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}}}", echo);
plugin.tool("config", "config/get", OBJ, config);
plugin.tool("kv", "kv round trip", OBJ, kv);
plugin.tool("http", "http/fetch", OBJ, http);
plugin.tool("notify", "log, progress, notifications", OBJ, notify);
plugin.tool("confirm", "input_required", OBJ, confirm);
plugin.tool("big", "large output", OBJ, big);
plugin.tool("rpc_error", "JSON-RPC error", OBJ, rpcError);
plugin.tool("roundtrip", "JSON numbers and strings round trip", OBJ, roundtrip);
plugin.tool("task", "task/start, then a result", OBJ, task);
plugin.taskSupport("task", "optional").taskSupport("echo", "forbidden");
plugin.resource("fixture://static", "static", "a fixed resource", "text/plain", rStatic);
plugin.resourceTemplate("fixture://item/{id}", "item", "an item", "text/plain", rItem);
plugin.app("ui://fixture/app", "app", "an MCP App", "{\"csp\":{\"connectDomains\":[\"https://example.com\"]},\"prefersBorder\":true}",
  "<!DOCTYPE html><html><head><title>fixture</title></head><body>app</body></html>");
plugin.linkTool("echo", "ui://fixture/app", true);
plugin.skill(["SKILL.md", "refs/notes.md"], ["---\nname: fixture-skill\ndescription: A skill of the SDK fixture\n---\n# Fixture\n", "notes\n"]);
plugin.prompt("greet", "Greet someone", "[{\"name\":\"name\",\"required\":true}]", greet);
plugin.complete(complete);
plugin.requestCapabilities("{\"kv\":true,\"http\":[\"https://example.com/\"],\"config\":[\"greeting\"]}");

export function wasmcp_call(): u32 {
  return plugin.run();
}
