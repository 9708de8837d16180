// wasmcp — write wasmcp/1 plugins in AssemblyScript.
//
//   import { Plugin, Request, ToolResult, JSONValue } from "../../sdk/assemblyscript/assembly";
//   const plugin = new Plugin("demo", "1.0.0", "what it does");
//   plugin.tool("hello", "Say hello", `{"type":"object"}`, hello);
//   export function wasmcp_call(): u32 { return plugin.run(); }
//
// Build with asc 0.28 and @assemblyscript/wasi-shim (which exports a _start
// that runs top-level code and does not exit; the host calls it once per
// instance). See README.md.

import {
  JSONValue, jarr, jbool, jnum, jobj, jstr, base64Encode, base64Decode,
} from "./json";

export {
  JSONValue, jarr, jbool, jnum, jnull, jobj, jstr, base64Encode, base64Decode, quote, formatNumber, parseNumber,
  JSON_MISSING, JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT,
} from "./json";

// ---- raw imports (module "wasmcp") ----

@external("wasmcp", "input_len") declare function input_len(): u32;
@external("wasmcp", "input_read") declare function input_read(ptr: usize, len: u32): u32;
@external("wasmcp", "output_write") declare function output_write(ptr: usize, len: u32): void;
@external("wasmcp", "log") declare function log_raw(level: i32, ptr: usize, len: u32): void;
@external("wasmcp", "call") declare function call_raw(mptr: usize, mlen: u32, pptr: usize, plen: u32): i32;
@external("wasmcp", "result_read") declare function result_read(ptr: usize, len: u32): u32;

// ---- host calls ----

/** errno values of host calls (ABI section 5). */
export namespace Errno {
  export const OK: i32 = 0;
  export const DENIED: i32 = -1;
  export const BAD_PARAMS: i32 = -2;
  export const CANCELED: i32 = -3;
  export const TOO_BIG: i32 = -4;
  export const FAILED: i32 = -5;
  export const UNSUPPORTED: i32 = -6;
  export const UNKNOWN_METHOD: i32 = -7;
  /** SDK-side: the host's answer was not the JSON the SDK expected. */
  export const PROTOCOL: i32 = -101;
}

/** Log levels (MCP order). */
export namespace Level {
  export const DEBUG: i32 = 0;
  export const INFO: i32 = 1;
  export const NOTICE: i32 = 2;
  export const WARNING: i32 = 3;
  export const ERROR: i32 = 4;
  export const CRITICAL: i32 = 5;
  export const ALERT: i32 = 6;
  export const EMERGENCY: i32 = 7;
}

const LEVEL_NAMES: string[] = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

/**
 * The outcome of a host call: ok with a value, or an errno the plugin can
 * handle (with the host's code and message for Errno.FAILED).
 */
export class HostResult {
  method: string = "";
  errno: i32 = 0;
  code: i64 = 0;
  message: string = "";
  value: JSONValue = JSONValue.missing();

  get ok(): bool { return this.errno == 0; }
  get denied(): bool { return this.errno == Errno.DENIED; }

  /** "config/get failed: denied (not granted by the operator)". */
  toString(): string {
    if (this.ok) return this.method + ": ok";
    let why = "";
    switch (this.errno) {
      case Errno.DENIED: why = "denied (not granted by the operator)"; break;
      case Errno.BAD_PARAMS: why = "bad params"; break;
      case Errno.CANCELED: why = "canceled or past the deadline"; break;
      case Errno.TOO_BIG: why = "too big"; break;
      case Errno.FAILED: why = this.message + " (code " + this.code.toString() + ")"; break;
      case Errno.UNSUPPORTED: why = "unsupported by this client or connection"; break;
      case Errno.UNKNOWN_METHOD: why = "unknown method"; break;
      case Errno.PROTOCOL: why = "unexpected answer from the host: " + this.message; break;
      default: why = "error " + this.errno.toString();
    }
    return this.method + " failed: " + why;
  }
}

/** Fast log line through the log import (always allowed). */
export function log(level: i32, msg: string): void {
  const b = String.UTF8.encode(msg);
  log_raw(level, changetype<usize>(b), <u32>b.byteLength);
}

/** A host call with JSON params; the result is parsed into HostResult.value. */
export function hostCall(method: string, params: JSONValue): HostResult {
  const r = new HostResult();
  r.method = method;
  const m = String.UTF8.encode(method);
  const p = String.UTF8.encode(params.isMissing ? "{}" : params.toJSON());
  const n = call_raw(changetype<usize>(m), <u32>m.byteLength, changetype<usize>(p), <u32>p.byteLength);
  if (n < 0) {
    r.errno = n;
    if (n == Errno.FAILED) {
      // The size of the error JSON is not reported: read up to 4 KiB.
      const buf = new ArrayBuffer(4096);
      const got = result_read(changetype<usize>(buf), 4096);
      const e = JSONValue.parse(String.UTF8.decode(buf.slice(0, <i32>min(got, 4096))));
      const code = e.get("code").num;
      r.code = isFinite(code) ? <i64>code : 0;
      r.message = e.get("message").isString ? e.get("message").str : "host call failed";
    }
    return r;
  }
  const buf = new ArrayBuffer(n);
  let got: u32 = 0;
  while (got < <u32>n) {
    const k = result_read(changetype<usize>(buf) + got, <u32>n - got);
    if (k == 0) break;
    got += k;
  }
  const v = JSONValue.parse(String.UTF8.decode(buf.slice(0, <i32>got)));
  if (v.isMissing) {
    r.errno = Errno.PROTOCOL;
    r.message = JSONValue.lastError;
    return r;
  }
  r.value = v;
  return r;
}

/** Structured log (notifications/message with any JSON data). */
export function logJSON(level: i32, logger: string, data: JSONValue): HostResult {
  const p = jobj().set("level", jstr(LEVEL_NAMES[level < 0 ? 0 : level > 7 ? 7 : level]));
  if (logger.length > 0) p.set("logger", jstr(logger));
  p.set("data", data);
  return hostCall("log", p);
}

/** Progress of the current request; total < 0 = unknown. */
export function progress(value: f64, total: f64 = -1, message: string = ""): HostResult {
  const p = jobj().set("progress", jnum(value));
  if (total >= 0) p.set("total", jnum(total));
  if (message.length > 0) p.set("message", jstr(message));
  return hostCall("progress", p);
}

/** Asks the host to describe the plugin again ("tools", "resources", "prompts"). */
export function notifyListChanged(kind: string): HostResult {
  return hostCall("notify/list_changed", jobj().set("kind", jstr(kind)));
}

/**
 * task/start: tells the host that this call, running as a task, is under
 * way; the client gets its task handle at once instead of after the first
 * round or 500 ms. Before it an input_required round is answered with no
 * task; after it input_required makes the task input_required. Outside a
 * task it does nothing.
 */
export function taskStart(): HostResult {
  return hostCall("task/start", jobj());
}

export function notifyResourceUpdated(uri: string): HostResult {
  return hostCall("notify/resource_updated", jobj().set("uri", jstr(uri)));
}

/** config/get: on success, value is the config value (usually a string). */
export function configGet(key: string): HostResult {
  const r = hostCall("config/get", jobj().set("key", jstr(key)));
  if (r.ok) r.value = r.value.get("value");
  return r;
}

/** kv/get: on success, value is the string, or null when absent. */
export function kvGet(key: string): HostResult {
  const r = hostCall("kv/get", jobj().set("key", jstr(key)));
  if (r.ok) r.value = r.value.get("value");
  return r;
}

/** kv/set; ttlSeconds <= 0 = no expiry. */
export function kvSet(key: string, value: string, ttlSeconds: i64 = 0): HostResult {
  const p = jobj().set("key", jstr(key)).set("value", jstr(value));
  if (ttlSeconds > 0) p.set("ttl_s", jnum(<f64>ttlSeconds));
  return hostCall("kv/set", p);
}

export function kvDelete(key: string): HostResult {
  return hostCall("kv/delete", jobj().set("key", jstr(key)));
}

/** kv/list: value is {keys, cursor?}. */
export function kvList(prefix: string, cursor: string = ""): HostResult {
  const p = jobj().set("prefix", jstr(prefix));
  if (cursor.length > 0) p.set("cursor", jstr(cursor));
  return hostCall("kv/list", p);
}

/** http/fetch: value is {status, headers, body | body_base64}. */
export function httpFetch(method: string, url: string, headers: JSONValue = JSONValue.missing(),
  body: string = "", timeoutMs: i64 = 0): HostResult {
  const p = jobj().set("method", jstr(method)).set("url", jstr(url));
  if (headers.isObject) p.set("headers", headers);
  if (body.length > 0) p.set("body", jstr(body));
  if (timeoutMs > 0) p.set("timeout_ms", jnum(<f64>timeoutMs));
  return hostCall("http/fetch", p);
}

/** The body of an httpFetch result as bytes (from body or body_base64). */
export function httpBodyBytes(r: HostResult): Uint8Array {
  const b64 = r.value.get("body_base64");
  if (b64.isString) {
    const d = base64Decode(b64.str);
    return d !== null ? d : new Uint8Array(0);
  }
  return Uint8Array.wrap(String.UTF8.encode(r.value.get("body").str));
}

/** The body of an httpFetch result as text (body, or body_base64 decoded as UTF-8). */
export function httpBodyText(r: HostResult): string {
  const b64 = r.value.get("body_base64");
  if (!b64.isString) return r.value.get("body").str;
  const d = httpBodyBytes(r);
  return String.UTF8.decode(d.buffer.slice(d.byteOffset, d.byteOffset + d.byteLength));
}

// ---- the request ----

/** One request as the plugin sees it. */
export class Request {
  method: string = "";
  params: JSONValue = JSONValue.missing();
  /** protocolVersion, clientInfo, clientCapabilities, progressToken, inputResponses, requestState */
  context: JSONValue = JSONValue.missing();
  varNames: string[] = [];
  varValues: string[] = [];

  /** A variable of the matched resource template ("" if none). */
  variable(name: string): string {
    for (let i = 0; i < this.varNames.length; i++) if (this.varNames[i] == name) return this.varValues[i];
    return "";
  }
  /** context.inputResponses[key] (missing on a first call). */
  inputResponse(key: string): JSONValue { return this.context.get("inputResponses").get(key); }
  /** context.requestState ("" if none). */
  get requestState(): string { return this.context.get("requestState").str; }
  /** Whether the client declared a capability ("sampling", "elicitation", "roots"). */
  clientHas(capability: string): bool {
    const v = this.context.get("clientCapabilities").get(capability);
    return !v.isMissing && !v.isNull;
  }
}

// ---- results ----

/** A JSON-RPC error (status 1). */
export class RpcError {
  constructor(public code: i32, public message: string, public data: JSONValue = JSONValue.missing()) {}
  toValue(): JSONValue {
    const v = jobj().set("code", jnum(<f64>this.code)).set("message", jstr(this.message));
    if (!this.data.isMissing) v.set("data", this.data);
    return v;
  }
}

/** An input_required result (ABI section 6). */
export class InputRequired {
  requests: JSONValue = jobj();
  state: string = "";
  /** Any request: "elicitation/create", "sampling/createMessage" or "roots/list". */
  request(key: string, method: string, params: JSONValue): InputRequired {
    this.requests.set(key, jobj().set("method", jstr(method)).set("params", params));
    return this;
  }
  elicit(key: string, message: string, requestedSchema: JSONValue): InputRequired {
    return this.request(key, "elicitation/create", jobj().set("message", jstr(message)).set("requestedSchema", requestedSchema));
  }
  sample(key: string, params: JSONValue): InputRequired { return this.request(key, "sampling/createMessage", params); }
  roots(key: string): InputRequired { return this.request(key, "roots/list", jobj()); }
  withState(s: string): InputRequired { this.state = s; return this; }
  toValue(): JSONValue {
    const v = jobj().set("resultType", jstr("input_required")).set("inputRequests", this.requests);
    if (this.state.length > 0) v.set("requestState", jstr(this.state));
    return v;
  }
}

/** Fields shared by every result: a JSON-RPC error or input_required instead. */
export class Outcome {
  rpc: RpcError | null = null;
  input: InputRequired | null = null;
}

/** A CallToolResult. */
export class ToolResult extends Outcome {
  content: JSONValue = jarr();
  structured: JSONValue = JSONValue.missing();
  isError: bool = false;

  static text(s: string): ToolResult { return new ToolResult().addText(s); }
  /** A tool error the model can read (isError: true). */
  static error(s: string): ToolResult { const r = ToolResult.text(s); r.isError = true; return r; }
  /** A failed host call as a tool error. */
  static hostError(r: HostResult): ToolResult { return ToolResult.error(r.toString()); }
  static rpcError(code: i32, message: string): ToolResult { const r = new ToolResult(); r.rpc = new RpcError(code, message); return r; }
  static inputRequired(ir: InputRequired): ToolResult { const r = new ToolResult(); r.input = ir; return r; }
  /** Structured content; without other content, its JSON is added as text. */
  static structured(v: JSONValue): ToolResult { const r = new ToolResult(); r.structured = v; return r; }

  addText(s: string): ToolResult {
    this.content.push(jobj().set("type", jstr("text")).set("text", jstr(s)));
    return this;
  }
  addImage(data: Uint8Array, mimeType: string): ToolResult {
    this.content.push(jobj().set("type", jstr("image")).set("data", jstr(base64Encode(data))).set("mimeType", jstr(mimeType)));
    return this;
  }
  withStructured(v: JSONValue): ToolResult { this.structured = v; return this; }

  toValue(): JSONValue {
    if (this.content.length == 0 && !this.structured.isMissing) this.addText(this.structured.toJSON());
    const v = jobj().set("content", this.content);
    if (!this.structured.isMissing) v.set("structuredContent", this.structured);
    if (this.isError) v.set("isError", jbool(true));
    return v;
  }
}

/** A ReadResourceResult. */
export class ResourceResult extends Outcome {
  contents: JSONValue = jarr();
  static text(uri: string, mimeType: string, text: string): ResourceResult { return new ResourceResult().addText(uri, mimeType, text); }
  static rpcError(code: i32, message: string): ResourceResult { const r = new ResourceResult(); r.rpc = new RpcError(code, message); return r; }
  addText(uri: string, mimeType: string, text: string): ResourceResult {
    this.contents.push(jobj().set("uri", jstr(uri)).set("mimeType", jstr(mimeType)).set("text", jstr(text)));
    return this;
  }
  addBlob(uri: string, mimeType: string, data: Uint8Array): ResourceResult {
    this.contents.push(jobj().set("uri", jstr(uri)).set("mimeType", jstr(mimeType)).set("blob", jstr(base64Encode(data))));
    return this;
  }
  toValue(): JSONValue { return jobj().set("contents", this.contents); }
}

/** A GetPromptResult. */
export class PromptResult extends Outcome {
  description: string = "";
  messages: JSONValue = jarr();
  static rpcError(code: i32, message: string): PromptResult { const r = new PromptResult(); r.rpc = new RpcError(code, message); return r; }
  /** A text message; role is "user" or "assistant". */
  message(role: string, text: string): PromptResult {
    this.messages.push(jobj().set("role", jstr(role)).set("content", jobj().set("type", jstr("text")).set("text", jstr(text))));
    return this;
  }
  toValue(): JSONValue {
    const v = jobj();
    if (this.description.length > 0) v.set("description", jstr(this.description));
    return v.set("messages", this.messages);
  }
}

/** A CompleteResult. */
export class CompletionResult extends Outcome {
  values: string[] = [];
  total: i64 = -1;
  hasMore: bool = false;
  toValue(): JSONValue {
    const vals = jarr();
    for (let i = 0; i < this.values.length; i++) vals.push(jstr(this.values[i]));
    const c = jobj().set("values", vals);
    if (this.total >= 0) c.set("total", jnum(<f64>this.total));
    if (this.hasMore) c.set("hasMore", jbool(true));
    return jobj().set("completion", c);
  }
}

// ---- the plugin model ----

export type ToolHandler = (req: Request, args: JSONValue) => ToolResult;
export type ResourceHandler = (req: Request, uri: string) => ResourceResult;
export type PromptHandler = (req: Request, args: JSONValue) => PromptResult;
export type CompleteHandler = (req: Request) => CompletionResult;

class ToolDef {
  constructor(public name: string, public description: string, public inputSchema: string,
    public outputSchema: string, public annotations: string, public handler: ToolHandler) {}
}
class ResourceDef {
  constructor(public uri: string, public name: string, public description: string,
    public mimeType: string, public template: bool, public handler: ResourceHandler) {}
}
class PromptDef {
  constructor(public name: string, public description: string, public arguments: string, public handler: PromptHandler) {}
}

/** byName returns the entry of list named name, or null. */
function byName<T>(list: T[], name: string): T | null {
  for (let i = 0; i < list.length; i++) {
    if (list[i].name == name) return list[i];
  }
  return null;
}

let outputLimit: i32 = 0;

/**
 * The host traps the plugin on the first byte over its output cap (an
 * operator setting the plugin cannot read). With a soft limit set here, the
 * SDK answers a result over it (in UTF-8 bytes) with a clean error instead:
 * isError for tools, -32603 otherwise. 0 (default) = none.
 */
export function setOutputLimit(maxBytes: i32): void { outputLimit = maxBytes; }

/** Matches uri against a template ("{var}" without '/', "{+var}" with); on a match stores the variables in req. */
export function matchTemplate(tmpl: string, uri: string, req: Request): bool {
  const names: string[] = [];
  const values: string[] = [];
  let i = 0, j = 0;
  while (i < tmpl.length) {
    const c = tmpl.charCodeAt(i);
    if (c != 0x7b) {
      if (j >= uri.length || uri.charCodeAt(j) != c) return false;
      i++; j++;
      continue;
    }
    const close = tmpl.indexOf("}", i);
    if (close < 0) return false;
    const reserved = tmpl.charCodeAt(i + 1) == 0x2b;
    names.push(tmpl.substring(i + 1 + (reserved ? 1 : 0), close));
    i = close + 1;
    const stop = i < tmpl.length && tmpl.charCodeAt(i) != 0x7b ? tmpl.charCodeAt(i) : -1;
    const start = j;
    while (j < uri.length && uri.charCodeAt(j) != stop && (reserved || uri.charCodeAt(j) != 0x2f)) j++;
    if (j == start) return false;
    values.push(uri.substring(start, j));
  }
  if (j != uri.length) return false;
  req.varNames = names;
  req.varValues = values;
  return true;
}

/** The MIME type of an MCP App resource (docs/apps-and-skills.md). */
export const APP_MIME = "text/html;profile=mcp-app";

/** The handler of an app's ResourceDef: never called (handle answers apps' reads). */
function appRead(req: Request, uri: string): ResourceResult { return new ResourceResult(); }

/** A plugin: register tools, resources, prompts, then call run() from wasmcp_call. */
export class Plugin {
  tools: ToolDef[] = [];
  resources: ResourceDef[] = [];
  prompts: PromptDef[] = [];
  completer: CompleteHandler | null = null;
  taskTools: string[] = [];
  taskSupports: string[] = [];
  /** The capabilities the plugin asks for, as JSON text ("" = none). */
  capabilities: string = "";
  /** _meta objects (JSON text) of tools (by name) and resources (by URI). */
  metaTargets: string[] = [];
  metaJSON: string[] = [];
  /** The apps' URIs and HTML. */
  appURIs: string[] = [];
  appHTML: string[] = [];
  /** Agent Skills: each one's file paths and contents. */
  skillPaths: string[][] = [];
  skillContents: string[][] = [];

  constructor(public name: string, public version: string = "", public description: string = "") {}

  /** Adds a tool; schemas and annotations are JSON text ("" = default / none). */
  tool(name: string, description: string, inputSchema: string, handler: ToolHandler,
    outputSchema: string = "", annotations: string = ""): Plugin {
    this.tools.push(new ToolDef(name, description, inputSchema, outputSchema, annotations, handler));
    return this;
  }
  resource(uri: string, name: string, description: string, mimeType: string, handler: ResourceHandler): Plugin {
    this.resources.push(new ResourceDef(uri, name, description, mimeType, false, handler));
    return this;
  }
  resourceTemplate(uriTemplate: string, name: string, description: string, mimeType: string, handler: ResourceHandler): Plugin {
    this.resources.push(new ResourceDef(uriTemplate, name, description, mimeType, true, handler));
    return this;
  }
  /** arguments: JSON array of {name, description?, required?}. */
  prompt(name: string, description: string, args: string, handler: PromptHandler): Plugin {
    this.prompts.push(new PromptDef(name, description, args, handler));
    return this;
  }
  /**
   * Lets the tool named run as a task (execution.taskSupport, docs/tasks.md):
   * support is "optional", "required" or "forbidden" (the default). An
   * unknown tool or value makes the manifest an error.
   */
  taskSupport(tool: string, support: string): Plugin {
    this.taskTools.push(tool);
    this.taskSupports.push(support);
    return this;
  }
  complete(handler: CompleteHandler): Plugin { this.completer = handler; return this; }
  /** Gives the tool named target, or the resource whose URI it is, the _meta object json. */
  meta(target: string, json: string): Plugin {
    this.metaTargets.push(target);
    this.metaJSON.push(json);
    return this;
  }
  /**
   * Adds an MCP App: a ui:// resource of type APP_MIME whose _meta is
   * {"ui": ui} (ui: JSON text of csp, permissions, domain, prefersBorder;
   * "" = {}), read as html. Link tools to it with linkTool.
   */
  app(uri: string, name: string, description: string, ui: string, html: string): Plugin {
    this.resources.push(new ResourceDef(uri, name, description, APP_MIME, false, appRead));
    this.appURIs.push(uri);
    this.appHTML.push(html);
    return this.meta(uri, "{\"ui\":" + (ui.length > 0 ? ui : "{}") + "}");
  }
  /**
   * Links the tool named to the app at resourceUri (_meta.ui.resourceUri);
   * appOnly makes it visible to the app only (visibility ["app"]). The
   * tool still returns text for clients without the extension.
   */
  linkTool(tool: string, resourceUri: string, appOnly: bool = false): Plugin {
    const ui = jobj().set("resourceUri", jstr(resourceUri));
    if (appOnly) ui.set("visibility", jarr().push(jstr("app")));
    return this.meta(tool, jobj().set("ui", ui).toJSON());
  }
  /** Embeds an Agent Skill: its files' paths (SKILL.md among them) and UTF-8 contents. */
  skill(paths: string[], contents: string[]): Plugin {
    this.skillPaths.push(paths);
    this.skillContents.push(contents);
    return this;
  }
  private metaOf(target: string): string {
    const i = this.metaTargets.lastIndexOf(target);
    return i >= 0 ? this.metaJSON[i] : "";
  }
  requestCapabilities(json: string): Plugin { this.capabilities = json; return this; }

  /** The manifest, or an RpcError if a schema is not valid JSON. */
  manifest(): JSONValue {
    const m = jobj().set("abi", jnum(1)).set("name", jstr(this.name));
    if (this.version.length > 0) m.set("version", jstr(this.version));
    if (this.description.length > 0) m.set("description", jstr(this.description));
    const tools = jarr();
    for (let i = 0; i < this.tools.length; i++) {
      const t = this.tools[i];
      const v = jobj().set("name", jstr(t.name));
      if (t.description.length > 0) v.set("description", jstr(t.description));
      const schema = JSONValue.parse(t.inputSchema.length > 0 ? t.inputSchema : "{\"type\":\"object\"}");
      if (schema.isMissing) return badManifest(t.name);
      v.set("inputSchema", schema);
      if (t.outputSchema.length > 0) {
        const o = JSONValue.parse(t.outputSchema);
        if (o.isMissing) return badManifest(t.name);
        v.set("outputSchema", o);
      }
      if (t.annotations.length > 0) {
        const a = JSONValue.parse(t.annotations);
        if (a.isMissing) return badManifest(t.name);
        v.set("annotations", a);
      }
      const tm = this.metaOf(t.name);
      if (tm.length > 0) {
        const mv = JSONValue.parse(tm);
        if (mv.isMissing) return badManifest(t.name);
        v.set("_meta", mv);
      }
      const ti = this.taskTools.lastIndexOf(t.name);
      if (ti >= 0 && this.taskSupports[ti] != "forbidden") {
        v.set("execution", jobj().set("taskSupport", jstr(this.taskSupports[ti])));
      }
      tools.push(v);
    }
    for (let i = 0; i < this.taskTools.length; i++) {
      const sup = this.taskSupports[i];
      let found = false;
      for (let j = 0; j < this.tools.length; j++) if (this.tools[j].name == this.taskTools[i]) found = true;
      if (!found || (sup != "optional" && sup != "required" && sup != "forbidden")) {
        return new RpcError(-32603, "plugin manifest: task support of \"" + this.taskTools[i] +
          "\": want a tool's name and \"optional\", \"required\" or \"forbidden\"").toValue();
      }
    }
    const resources = jarr(), templates = jarr();
    for (let i = 0; i < this.resources.length; i++) {
      const r = this.resources[i];
      const v = jobj().set(r.template ? "uriTemplate" : "uri", jstr(r.uri)).set("name", jstr(r.name));
      if (r.description.length > 0) v.set("description", jstr(r.description));
      if (r.mimeType.length > 0) v.set("mimeType", jstr(r.mimeType));
      const rm = r.template ? "" : this.metaOf(r.uri);
      if (rm.length > 0) {
        const mv = JSONValue.parse(rm);
        if (mv.isMissing) return badManifest(r.uri);
        v.set("_meta", mv);
      }
      if (r.template) templates.push(v); else resources.push(v);
    }
    const prompts = jarr();
    for (let i = 0; i < this.prompts.length; i++) {
      const p = this.prompts[i];
      const v = jobj().set("name", jstr(p.name));
      if (p.description.length > 0) v.set("description", jstr(p.description));
      if (p.arguments.length > 0) {
        const a = JSONValue.parse(p.arguments);
        if (a.isMissing) return badManifest(p.name);
        v.set("arguments", a);
      }
      prompts.push(v);
    }
    m.set("tools", tools).set("resources", resources).set("resourceTemplates", templates).set("prompts", prompts);
    m.set("completions", jbool(this.completer !== null));
    if (this.capabilities.length > 0) {
      const c = JSONValue.parse(this.capabilities);
      if (c.isMissing) return badManifest("capabilities");
      m.set("capabilities", c);
    }
    if (this.skillPaths.length > 0) {
      const skills = jarr();
      for (let i = 0; i < this.skillPaths.length; i++) {
        const files = jobj();
        for (let j = 0; j < this.skillPaths[i].length && j < this.skillContents[i].length; j++) {
          files.set(this.skillPaths[i][j], jstr(this.skillContents[i][j]));
        }
        skills.push(jobj().set("files", files));
      }
      m.set("skills", skills);
    }
    return m;
  }

  /** Handles one envelope; returns the status and sets lastOutput. */
  handle(input: string): u32 {
    const env = JSONValue.parse(input);
    const method = env.get("method");
    if (!method.isString) return this.reply(1, new RpcError(-32600, "invalid request envelope").toValue(), false);
    const req = new Request();
    req.method = method.str;
    req.params = env.get("params");
    req.context = env.get("context");
    const m = req.method;
    if (m == "wasmcp/describe") {
      const man = this.manifest();
      return this.reply(man.get("code").isNumber ? 1 : 0, man, false);
    }
    if (m == "tools/call") {
      const t = byName<ToolDef>(this.tools, req.params.get("name").str);
      if (t === null) return this.reply(1, new RpcError(-32602, "unknown tool").toValue(), true);
      const h = t.handler;
      const r = h(req, req.params.get("arguments"));
      return this.outcome(r, r.toValue(), true);
    }
    if (m == "resources/read") {
      const uri = req.params.get("uri").str;
      const ai = this.appURIs.indexOf(uri);
      if (ai >= 0) {
        const res = ResourceResult.text(uri, APP_MIME, this.appHTML[ai]);
        res.contents.at(0).set("_meta", JSONValue.parse(this.metaOf(uri)));
        return this.outcome(res, res.toValue(), false);
      }
      for (let pass = 0; pass < 2; pass++) {
        for (let i = 0; i < this.resources.length; i++) {
          const r = this.resources[i];
          const hit = pass == 0 ? (!r.template && r.uri == uri) : (r.template && matchTemplate(r.uri, uri, req));
          if (hit) {
            const h = r.handler;
            const res = h(req, uri);
            return this.outcome(res, res.toValue(), false);
          }
        }
      }
      return this.reply(1, new RpcError(-32002, "Resource not found", jobj().set("uri", jstr(uri))).toValue(), false);
    }
    if (m == "prompts/get") {
      const p = byName<PromptDef>(this.prompts, req.params.get("name").str);
      if (p === null) return this.reply(1, new RpcError(-32602, "unknown prompt").toValue(), false);
      const h = p.handler;
      const r = h(req, req.params.get("arguments"));
      return this.outcome(r, r.toValue(), false);
    }
    if (m == "completion/complete") {
      const c = this.completer;
      if (c === null) return this.reply(0, new CompletionResult().toValue(), false);
      const r = c(req);
      return this.outcome(r, r.toValue(), false);
    }
    return this.reply(1, new RpcError(-32601, "Method not found").toValue(), false);
  }

  lastOutput: string = "";

  private outcome(o: Outcome, v: JSONValue, isTool: bool): u32 {
    const rpc = o.rpc;
    if (rpc !== null) return this.reply(1, rpc.toValue(), isTool);
    const input = o.input;
    if (input !== null) return this.reply(0, input.toValue(), isTool);
    return this.reply(0, v, isTool);
  }

  private reply(status: u32, v: JSONValue, isTool: bool): u32 {
    let out = v.toJSON();
    if (outputLimit > 0 && String.UTF8.byteLength(out) > outputLimit) {
      const msg = "result too large: " + String.UTF8.byteLength(out).toString() +
        " bytes over the plugin's limit of " + outputLimit.toString();
      if (isTool && status == 0) {
        out = ToolResult.error(msg).toValue().toJSON();
      } else {
        out = new RpcError(-32603, msg).toValue().toJSON();
        status = 1;
      }
    }
    this.lastOutput = out;
    return status;
  }

  /** Reads the request, dispatches it, writes the response; call from wasmcp_call. */
  run(): u32 {
    const n = input_len();
    const buf = new ArrayBuffer(<i32>n);
    let got: u32 = 0;
    while (got < n) {
      const k = input_read(changetype<usize>(buf) + got, n - got);
      if (k == 0) break;
      got += k;
    }
    const status = this.handle(String.UTF8.decode(buf.slice(0, <i32>got)));
    const out = String.UTF8.encode(this.lastOutput);
    this.lastOutput = "";
    if (out.byteLength > 0) output_write(changetype<usize>(out), <u32>out.byteLength);
    // Nothing allocated during the call is live now: collect it all at
    // once (with --runtime minimal this is the only collection).
    __collect();
    return status;
  }
}

function badManifest(what: string): JSONValue {
  return new RpcError(-32603, "plugin manifest: invalid JSON in " + what).toValue();
}

