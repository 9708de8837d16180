//! SDK test fixture (Rust): the same tools as the C and AssemblyScript
//! fixtures; sdk/sdktest checks all three.

#[path = "../../../rust/wasmcp.rs"]
mod wasmcp;

use wasmcp::*;

fn echo(req: &Request, args: &Value) -> Result<ToolResult, Error> {
    let text = args["text"].as_str().ok_or("text is required")?;
    let pv = req.context["protocolVersion"].clone();
    Ok(ToolResult::text(text).with_structured(Value::obj([("text", Value::from(text)), ("protocolVersion", pv)])))
}

fn config(_: &Request, args: &Value) -> Result<ToolResult, Error> {
    Ok(ToolResult::text(host::config_get(args["key"].as_str().unwrap_or(""))?))
}

fn kv(_: &Request, args: &Value) -> Result<ToolResult, Error> {
    let key = args["key"].as_str().unwrap_or("");
    host::kv_set(key, args["value"].as_str().unwrap_or(""), Some(60))?;
    let got = host::kv_get(key)?;
    let (keys, _) = host::kv_list("", None)?;
    host::kv_delete(key)?;
    let after = host::kv_get(key)?;
    Ok(ToolResult::text(format!(
        "{} keys={} after_delete={}",
        got.unwrap_or_default(),
        keys.len(),
        if after.is_some() { 1 } else { 0 }
    )))
}

fn http(_: &Request, args: &Value) -> Result<ToolResult, Error> {
    let req = host::HttpRequest {
        method: "POST".into(),
        url: args["url"].as_str().unwrap_or("").into(),
        headers: vec![("x-test".into(), "1".into())],
        body: Some(b"ping".to_vec()),
        ..Default::default()
    };
    let resp = host::http_fetch(&req)?;
    Ok(ToolResult::text(format!("{} {}", resp.status, resp.text())))
}

fn notify(_: &Request, _: &Value) -> Result<ToolResult, Error> {
    host::log(Level::Warning, "fast log line");
    host::progress(1.0, Some(2.0), Some("half"))?;
    host::log_json(Level::Info, Some("fixture"), Value::obj([("k", Value::from(1))]))?;
    host::notify_list_changed("tools")?;
    host::notify_resource_updated("fixture://static")?;
    Ok(ToolResult::text("ok"))
}

fn confirm(req: &Request, _: &Value) -> Result<ToolResult, Error> {
    match req.input_response("confirm") {
        None => {
            let schema = Value::parse(r#"{"type":"object","properties":{"ok":{"type":"boolean"}}}"#).unwrap();
            Err(InputRequired::new().elicit("confirm", "Proceed?", schema).state("step-1").into())
        }
        Some(answer) => Ok(ToolResult::text(format!(
            "{} after {}",
            answer["action"].as_str().unwrap_or("?"),
            req.request_state().unwrap_or("?")
        ))),
    }
}

fn big(_: &Request, args: &Value) -> Result<ToolResult, Error> {
    set_output_limit(args["soft_limit"].as_i64().unwrap_or(0) as usize);
    Ok(ToolResult::text("x".repeat(args["n"].as_i64().unwrap_or(0) as usize)))
}

fn rpc_error(_: &Request, _: &Value) -> Result<ToolResult, Error> {
    Err(RpcError { code: -32602, message: "bad thing".into(), data: Some(Value::obj([("why", Value::from("test"))])) }.into())
}

fn roundtrip(_: &Request, args: &Value) -> Result<ToolResult, Error> {
    let v = Value::obj([("numbers", args["numbers"].clone()), ("strings", args["strings"].clone())]);
    Ok(ToolResult::text("ok").with_structured(v))
}

fn r_static(_: &Request, uri: &str) -> Result<Vec<Contents>, Error> {
    Ok(vec![Contents::text(uri, "text/plain", "static text")])
}

fn r_item(req: &Request, uri: &str) -> Result<Vec<Contents>, Error> {
    let id = req.var("id").unwrap_or("");
    Ok(vec![
        Contents::text(uri, "text/plain", &format!("item {}", id)),
        Contents::blob(uri, "application/octet-stream", id.as_bytes()),
    ])
}

fn greet(_: &Request, args: &Value) -> Result<PromptResult, Error> {
    let name = args["name"].as_str().unwrap_or("world");
    Ok(PromptResult::new().description("A greeting").message("user", &format!("Hello, {}!", name)))
}

fn complete(req: &Request) -> Result<Completion, Error> {
    let prefix = req.params["argument"]["value"].as_str().unwrap_or("");
    let mut c = Completion::of(["alpha", "beta", "gamma", "alphabet"].iter().filter(|w| w.starts_with(prefix)).copied());
    c.total = Some(c.values.len() as u64);
    Ok(c)
}

const OBJ: &str = r#"{"type":"object"}"#;

// A tool that may run as a task: says so to the host, then answers.
fn task(_: &Request, _: &Value) -> Result<ToolResult, Error> {
    host::task_start()?;
    Ok(ToolResult::text("task done"))
}

static TOOLS: [Tool; 10] = [
    Tool { name: "echo", description: "Echo text", input_schema: r#"{"type":"object","properties":{"text":{"type":"string"}}}"#, output_schema: "", annotations: "", handler: echo },
    Tool { name: "config", description: "config/get", input_schema: OBJ, output_schema: "", annotations: "", handler: config },
    Tool { name: "kv", description: "kv round trip", input_schema: OBJ, output_schema: "", annotations: "", handler: kv },
    Tool { name: "http", description: "http/fetch", input_schema: OBJ, output_schema: "", annotations: "", handler: http },
    Tool { name: "notify", description: "log, progress, notifications", input_schema: OBJ, output_schema: "", annotations: "", handler: notify },
    Tool { name: "confirm", description: "input_required", input_schema: OBJ, output_schema: "", annotations: "", handler: confirm },
    Tool { name: "big", description: "large output", input_schema: OBJ, output_schema: "", annotations: "", handler: big },
    Tool { name: "rpc_error", description: "JSON-RPC error", input_schema: OBJ, output_schema: "", annotations: "", handler: rpc_error },
    Tool { name: "roundtrip", description: "JSON numbers and strings round trip", input_schema: OBJ, output_schema: "", annotations: "", handler: roundtrip },
    Tool { name: "task", description: "task/start, then a result", input_schema: OBJ, output_schema: "", annotations: "", handler: task },
];

static TASK_TOOLS: [TaskTool; 2] =
    [TaskTool { tool: "task", support: TaskSupport::Optional }, TaskTool { tool: "echo", support: TaskSupport::Forbidden }];

static RESOURCES: [Resource; 2] = [
    Resource { uri: "fixture://static", name: "static", description: "a fixed resource", mime_type: "text/plain", handler: r_static },
    Resource { uri: "ui://fixture/app", name: "app", description: "an MCP App", mime_type: APP_MIME, handler: r_app },
];

const APP_HTML: &str = "<!DOCTYPE html><html><head><title>fixture</title></head><body>app</body></html>";

fn r_app(_: &Request, uri: &str) -> Result<Vec<Contents>, Error> {
    Ok(vec![Contents::text(uri, APP_MIME, APP_HTML)])
}

static METAS: [Meta; 2] = [
    Meta { target: "ui://fixture/app", meta: r#"{"ui":{"csp":{"connectDomains":["https://example.com"]},"prefersBorder":true}}"# },
    Meta { target: "echo", meta: ui_meta!("ui://fixture/app", app_only) },
];

static SKILLS: [Skill; 1] = [Skill {
    files: &[
        ("SKILL.md", "---\nname: fixture-skill\ndescription: A skill of the SDK fixture\n---\n# Fixture\n"),
        ("refs/notes.md", "notes\n"),
    ],
}];

static TEMPLATES: [ResourceTemplate; 1] = [ResourceTemplate {
    uri_template: "fixture://item/{id}",
    name: "item",
    description: "an item",
    mime_type: "text/plain",
    handler: r_item,
}];

static PROMPTS: [Prompt; 1] =
    [Prompt { name: "greet", description: "Greet someone", arguments: r#"[{"name":"name","required":true}]"#, handler: greet }];

static PLUGIN: Plugin = Plugin {
    name: "fixture",
    version: "0.0.1",
    description: "SDK test fixture",
    tools: &TOOLS,
    task_tools: &TASK_TOOLS,
    resources: &RESOURCES,
    templates: &TEMPLATES,
    prompts: &PROMPTS,
    complete: Some(complete),
    capabilities: r#"{"kv":true,"http":["https://example.com/"],"config":["greeting"]}"#,
    metas: &METAS,
    skills: &SKILLS,
};

#[no_mangle]
pub extern "C" fn wasmcp_call() -> u32 {
    run(&PLUGIN)
}
