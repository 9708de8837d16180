/* SDK test fixture (C): exercises every part of sdk/c. The same tools exist
 * in the Rust and AssemblyScript fixtures; sdk/sdktest checks all three. */
#define WASMCP_IMPLEMENTATION
#include "wasmcp.h"

#include <stdlib.h>
#include <string.h>

static void t_echo(wasmcp_ctx *ctx, wasmcp_json args) {
	size_t n;
	const char *text = wasmcp_arg_str(args, "text", &n);
	if (!text) {
		wasmcp_tool_error(ctx, "text is required");
		return;
	}
	wasmcp_text(ctx, text, n);
	wasmcp_buf *s = wasmcp_structured(ctx);
	wasmcp_w_obj(s);
	wasmcp_w_key(s, "text");
	wasmcp_w_strn(s, text, n);
	wasmcp_w_key(s, "protocolVersion");
	size_t pn;
	const char *pv = wasmcp_json_str(wasmcp_json_get(wasmcp_context(ctx), "protocolVersion"), &pn);
	if (pv) wasmcp_w_strn(s, pv, pn);
	else wasmcp_w_null(s);
	wasmcp_w_end_obj(s);
}

static void t_config(wasmcp_ctx *ctx, wasmcp_json args) {
	const char *key = wasmcp_arg_str(args, "key", NULL);
	const char *value;
	int err = wasmcp_config_get(ctx, key ? key : "", &value);
	if (err) {
		wasmcp_tool_error_host(ctx, err);
		return;
	}
	wasmcp_textz(ctx, value);
}

static void t_kv(wasmcp_ctx *ctx, wasmcp_json args) {
	size_t n;
	const char *key = wasmcp_arg_str(args, "key", NULL);
	const char *val = wasmcp_arg_str(args, "value", &n);
	int err = wasmcp_kv_set(ctx, key, val, n, 60);
	if (err) {
		wasmcp_tool_error_host(ctx, err);
		return;
	}
	const char *got;
	size_t gn;
	int r = wasmcp_kv_get(ctx, key, &got, &gn);
	if (r < 0) {
		wasmcp_tool_error_host(ctx, r);
		return;
	}
	wasmcp_json keys;
	err = wasmcp_kv_list(ctx, "", NULL, &keys, NULL);
	if (err) {
		wasmcp_tool_error_host(ctx, err);
		return;
	}
	err = wasmcp_kv_delete(ctx, key);
	if (err) {
		wasmcp_tool_error_host(ctx, err);
		return;
	}
	int r2 = wasmcp_kv_get(ctx, key, &got, &gn);
	wasmcp_textf(ctx, "%.*s keys=%zu after_delete=%d", r == 1 ? (int)gn : 0, r == 1 ? got : "", wasmcp_json_len(keys), r2);
}

static void t_http(wasmcp_ctx *ctx, wasmcp_json args) {
	wasmcp_http_request req = {0};
	req.url = wasmcp_arg_str(args, "url", NULL);
	req.method = "POST";
	req.body = "ping";
	req.body_len = 4;
	req.headers_json = "{\"x-test\":\"1\"}";
	wasmcp_http_response resp;
	int err = wasmcp_http_fetch(ctx, &req, &resp);
	if (err) {
		wasmcp_tool_error_host(ctx, err);
		return;
	}
	wasmcp_textf(ctx, "%d %.*s", resp.status, (int)resp.body_len, (const char *)resp.body);
}

static void t_notify(wasmcp_ctx *ctx, wasmcp_json args) {
	(void)args;
	wasmcp_log(WASMCP_WARNING, "fast log line");
	int err = wasmcp_progress(ctx, 1, 2, "half");
	if (!err) err = wasmcp_log_json(ctx, WASMCP_INFO, "fixture", "{\"k\":1}");
	if (!err) err = wasmcp_notify_list_changed(ctx, "tools");
	if (!err) err = wasmcp_notify_resource_updated(ctx, "fixture://static");
	if (err) {
		wasmcp_tool_error_host(ctx, err);
		return;
	}
	wasmcp_textz(ctx, "ok");
}

static void t_confirm(wasmcp_ctx *ctx, wasmcp_json args) {
	(void)args;
	wasmcp_json answer = wasmcp_input_response(ctx, "confirm");
	if (wasmcp_json_is_missing(answer)) {
		wasmcp_input_request(ctx, "confirm", "elicitation/create",
			"{\"message\":\"Proceed?\",\"requestedSchema\":{\"type\":\"object\",\"properties\":{\"ok\":{\"type\":\"boolean\"}}}}");
		wasmcp_input_required(ctx, "step-1");
		return;
	}
	const char *action = wasmcp_json_str(wasmcp_json_get(answer, "action"), NULL);
	const char *state = wasmcp_request_state(ctx);
	wasmcp_textf(ctx, "%s after %s", action ? action : "?", state ? state : "?");
}

static void t_big(wasmcp_ctx *ctx, wasmcp_json args) {
	int64_t n = 0, soft = 0;
	wasmcp_arg_int(args, "n", &n);
	wasmcp_arg_int(args, "soft_limit", &soft);
	wasmcp_set_output_limit((size_t)soft);
	char *s = (char *)wasmcp_alloc((size_t)n);
	if (!s) {
		wasmcp_tool_error(ctx, "out of memory");
		return;
	}
	memset(s, 'x', (size_t)n);
	wasmcp_text(ctx, s, (size_t)n);
}

static void t_rpc_error(wasmcp_ctx *ctx, wasmcp_json args) {
	(void)args;
	wasmcp_rpc_error(ctx, -32602, "bad thing", "{\"why\":\"test\"}");
}

/* roundtrip: numbers and strings are parsed and written again. */
static void t_roundtrip(wasmcp_ctx *ctx, wasmcp_json args) {
	wasmcp_json nums = wasmcp_json_get(args, "numbers"), strs = wasmcp_json_get(args, "strings");
	wasmcp_buf *s = wasmcp_structured(ctx);
	wasmcp_w_obj(s);
	wasmcp_w_key(s, "numbers");
	wasmcp_w_arr(s);
	for (size_t i = 0; i < wasmcp_json_len(nums); i++) {
		double d = 0;
		wasmcp_json_num(wasmcp_json_at(nums, i), &d);
		wasmcp_w_num(s, d);
	}
	wasmcp_w_end_arr(s);
	wasmcp_w_key(s, "strings");
	wasmcp_w_arr(s);
	for (size_t i = 0; i < wasmcp_json_len(strs); i++) {
		size_t n = 0;
		const char *str = wasmcp_json_str(wasmcp_json_at(strs, i), &n);
		wasmcp_w_strn(s, str, n);
	}
	wasmcp_w_end_arr(s);
	wasmcp_w_end_obj(s);
	wasmcp_textz(ctx, "ok");
}

static void r_static(wasmcp_ctx *ctx, const char *uri) {
	wasmcp_resource_text(ctx, uri, "text/plain", "static text", 11);
}

static const char app_html[] = "<!DOCTYPE html><html><head><title>fixture</title></head><body>app</body></html>";

static void r_app(wasmcp_ctx *ctx, const char *uri) {
	(void)uri;
	wasmcp_app_html(ctx, app_html, sizeof app_html - 1);
}

static void r_item(wasmcp_ctx *ctx, const char *uri) {
	const char *id = wasmcp_uri_var(ctx, "id");
	char text[128];
	int n = snprintf(text, sizeof text, "item %s", id);
	wasmcp_resource_text(ctx, uri, "text/plain", text, (size_t)n);
	/* a second entry: the id as a blob */
	wasmcp_resource_blob(ctx, uri, "application/octet-stream", id, strlen(id));
}

static void p_greet(wasmcp_ctx *ctx, wasmcp_json args) {
	const char *name = wasmcp_arg_str(args, "name", NULL);
	wasmcp_prompt_description(ctx, "A greeting");
	char msg[128];
	snprintf(msg, sizeof msg, "Hello, %s!", name ? name : "world");
	wasmcp_prompt_message(ctx, "user", msg);
}

static void complete(wasmcp_ctx *ctx, wasmcp_json params) {
	static const char *words[] = {"alpha", "beta", "gamma", "alphabet"};
	size_t n;
	const char *prefix = wasmcp_json_str(wasmcp_json_get(wasmcp_json_get(params, "argument"), "value"), &n);
	if (!prefix) prefix = "", n = 0;
	int count = 0;
	for (size_t i = 0; i < WASMCP_COUNT(words); i++) {
		if (strncmp(words[i], prefix, n) == 0) {
			wasmcp_complete_value(ctx, words[i]);
			count++;
		}
	}
	wasmcp_complete_total(ctx, count, 0);
}

#define OBJ "{\"type\":\"object\"}"
/* A tool that may run as a task: says so to the host, then answers. */
static void t_task(wasmcp_ctx *ctx, wasmcp_json args) {
	(void)args;
	int err = wasmcp_task_start(ctx);
	if (err) {
		wasmcp_tool_error_host(ctx, err);
		return;
	}
	wasmcp_textz(ctx, "task done");
}

static const wasmcp_tool tools[] = {
	{"echo", "Echo text", "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}}}", NULL, NULL, t_echo},
	{"config", "config/get", OBJ, NULL, NULL, t_config},
	{"kv", "kv round trip", OBJ, NULL, NULL, t_kv},
	{"http", "http/fetch", OBJ, NULL, NULL, t_http},
	{"notify", "log, progress, notifications", OBJ, NULL, NULL, t_notify},
	{"confirm", "input_required", OBJ, NULL, NULL, t_confirm},
	{"big", "large output", OBJ, NULL, NULL, t_big},
	{"rpc_error", "JSON-RPC error", OBJ, NULL, NULL, t_rpc_error},
	{"roundtrip", "JSON numbers and strings round trip", OBJ, NULL, NULL, t_roundtrip},
	{"task", "task/start, then a result", OBJ, NULL, NULL, t_task},
};
static const wasmcp_task_tool task_tools[] = {
	{"task", "optional"},
	{"echo", "forbidden"},
};
static const wasmcp_resource resources[] = {
	{"fixture://static", "static", "a fixed resource", "text/plain", r_static},
	{"ui://fixture/app", "app", "an MCP App", WASMCP_APP_MIME, r_app},
};
static const wasmcp_meta metas[] = {
	{"ui://fixture/app", "{\"ui\":{\"csp\":{\"connectDomains\":[\"https://example.com\"]},\"prefersBorder\":true}}"},
	{"echo", WASMCP_UI_META_APP_ONLY("ui://fixture/app")},
};
static const wasmcp_skill_file skill_files[] = {
	{"SKILL.md", "---\nname: fixture-skill\ndescription: A skill of the SDK fixture\n---\n# Fixture\n"},
	{"refs/notes.md", "notes\n"},
};
static const wasmcp_skill skills[] = {{skill_files, WASMCP_COUNT(skill_files)}};
static const wasmcp_resource_template templates[] = {
	{"fixture://item/{id}", "item", "an item", "text/plain", r_item},
};
static const wasmcp_prompt prompts[] = {
	{"greet", "Greet someone", "[{\"name\":\"name\",\"required\":true}]", p_greet},
};
static const wasmcp_plugin plugin = {
	.name = "fixture",
	.version = "0.0.1",
	.description = "SDK test fixture",
	.tools = tools,
	.n_tools = WASMCP_COUNT(tools),
	.task_tools = task_tools,
	.n_task_tools = WASMCP_COUNT(task_tools),
	.resources = resources,
	.n_resources = WASMCP_COUNT(resources),
	.templates = templates,
	.n_templates = WASMCP_COUNT(templates),
	.prompts = prompts,
	.n_prompts = WASMCP_COUNT(prompts),
	.complete = complete,
	.capabilities = "{\"kv\":true,\"http\":[\"https://example.com/\"],\"config\":[\"greeting\"]}",
	.metas = metas,
	.n_metas = WASMCP_COUNT(metas),
	.skills = skills,
	.n_skills = WASMCP_COUNT(skills),
};

WASMCP_PLUGIN(plugin)
