/*
 * wasmcp.h — write wasmcp/1 plugins in C.
 *
 * Single header, stb style. In exactly one .c file:
 *
 *     #define WASMCP_IMPLEMENTATION
 *     #include "wasmcp.h"
 *     ... handlers, tables ...
 *     WASMCP_PLUGIN(my_plugin)
 *
 * Build (Debian clang 14 + wasi-libc + libclang-rt-14-dev-wasm32):
 *
 *     clang --target=wasm32-wasi --sysroot=/usr -mexec-model=reactor -O2 \
 *           -Wl,--stack-first -Wl,--strip-all -I<sdk/c> -o plugin.wasm plugin.c
 *
 * -mexec-model=reactor makes clang emit _initialize (run once per instance);
 * -Wl,--stack-first makes a stack overflow trap instead of silently
 * corrupting static data. See README.md for the whole API.
 */
#ifndef WASMCP_H
#define WASMCP_H

#include "wasmcp_json.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ABI version declared in the manifest. */
#define WASMCP_ABI 1

/* Status values returned by wasmcp_call. */
#define WASMCP_STATUS_OK 0
#define WASMCP_STATUS_ERROR 1

/* errno values of host calls (ABI section 5), always negative. */
enum {
	WASMCP_OK = 0,
	WASMCP_EDENIED = -1,      /* not granted by the operator */
	WASMCP_EBADPARAMS = -2,   /* params not valid for the method */
	WASMCP_ECANCELED = -3,    /* cancelled or past the deadline: return at once */
	WASMCP_ETOOBIG = -4,      /* request or result over the size limit */
	WASMCP_EFAILED = -5,      /* failed; see wasmcp_last_error */
	WASMCP_EUNSUPPORTED = -6, /* the client or connection cannot do this */
	WASMCP_EUNKNOWN = -7,     /* unknown method */
	WASMCP_ENOMEM = -100,     /* the plugin ran out of memory (SDK-side) */
	WASMCP_EPROTO = -101      /* the host's answer was not the expected JSON (SDK-side) */
};

/* Log levels of the log import (MCP order). */
enum {
	WASMCP_DEBUG = 0, WASMCP_INFO, WASMCP_NOTICE, WASMCP_WARNING,
	WASMCP_ERROR, WASMCP_CRITICAL, WASMCP_ALERT, WASMCP_EMERGENCY
};

/* JSON-RPC error codes a plugin commonly returns with status 1. */
#define WASMCP_RPC_INVALID_PARAMS (-32602)
#define WASMCP_RPC_METHOD_NOT_FOUND (-32601)
#define WASMCP_RPC_INTERNAL (-32603)
#define WASMCP_RPC_RESOURCE_NOT_FOUND (-32002)

/* ---- raw imports (module "wasmcp") ---- */
#define WASMCP__IMPORT(n) __attribute__((import_module("wasmcp"), import_name(n)))
WASMCP__IMPORT("input_len") uint32_t wasmcp_input_len(void);
WASMCP__IMPORT("input_read") uint32_t wasmcp_input_read(void *ptr, uint32_t len);
WASMCP__IMPORT("output_write") void wasmcp_output_write(const void *ptr, uint32_t len);
WASMCP__IMPORT("log") void wasmcp_log_raw(int32_t level, const void *ptr, uint32_t len);
WASMCP__IMPORT("call") int32_t wasmcp_call_raw(const void *mptr, uint32_t mlen, const void *pptr, uint32_t plen);
WASMCP__IMPORT("result_read") uint32_t wasmcp_result_read(void *ptr, uint32_t len);

typedef struct wasmcp_ctx wasmcp_ctx;

/* Handlers. They fill the result through ctx (wasmcp_text, wasmcp_structured,
 * wasmcp_tool_error, wasmcp_rpc_error, ...). */
typedef void (*wasmcp_tool_fn)(wasmcp_ctx *ctx, wasmcp_json args);
typedef void (*wasmcp_resource_fn)(wasmcp_ctx *ctx, const char *uri);
typedef void (*wasmcp_prompt_fn)(wasmcp_ctx *ctx, wasmcp_json args);
typedef void (*wasmcp_complete_fn)(wasmcp_ctx *ctx, wasmcp_json params);

/* JSON fields (schemas, annotations, arguments, capabilities) are JSON text;
 * the SDK validates them when it writes the manifest. NULL = absent. */
typedef struct {
	const char *name;
	const char *description;
	const char *input_schema;  /* NULL = {"type":"object"} */
	const char *output_schema; /* NULL = none */
	const char *annotations;   /* e.g. {"readOnlyHint":true} */
	wasmcp_tool_fn fn;
} wasmcp_tool;

typedef struct {
	const char *uri;
	const char *name;
	const char *description;
	const char *mime_type;
	wasmcp_resource_fn fn;
} wasmcp_resource;

/* uri_template: RFC 6570 level 1–2 subset: "{var}" matches one or more
 * characters other than '/', "{+var}" matches one or more of any. */
typedef struct {
	const char *uri_template;
	const char *name;
	const char *description;
	const char *mime_type;
	wasmcp_resource_fn fn;
} wasmcp_resource_template;

typedef struct {
	const char *name;
	const char *description;
	const char *arguments; /* JSON array of {name, description?, required?} */
	wasmcp_prompt_fn fn;
} wasmcp_prompt;

/* A tool that may run as a task (MCP execution.taskSupport; docs/tasks.md):
 * the host runs a call from a client that asks for a task in the
 * background, under [limits] task_timeout. Tools not listed are
 * "forbidden", the default. */
typedef struct {
	const char *tool;    /* the name of a tool in wasmcp_plugin.tools */
	const char *support; /* "optional", "required" or "forbidden" */
} wasmcp_task_tool;

typedef struct {
	const char *name;
	const char *version;
	const char *description;
	const wasmcp_tool *tools;
	size_t n_tools;
	const wasmcp_task_tool *task_tools; /* NULL: no tool runs as a task */
	size_t n_task_tools;
	const wasmcp_resource *resources;
	size_t n_resources;
	const wasmcp_resource_template *templates;
	size_t n_templates;
	const wasmcp_prompt *prompts;
	size_t n_prompts;
	wasmcp_complete_fn complete; /* NULL: no completions */
	const char *capabilities;    /* JSON object the plugin asks for, or NULL */
	const struct wasmcp_meta *metas; /* _meta objects of tools and resources, or NULL */
	size_t n_metas;
	const struct wasmcp_skill *skills; /* Agent Skills embedded in the plugin, or NULL */
	size_t n_skills;
} wasmcp_plugin;

/* ---- _meta, MCP Apps and Skills (docs/apps-and-skills.md) ----
 *
 * wasmcp_plugin.metas gives tools (by name) and resources (by URI) their
 * _meta object, JSON text checked when the manifest is written. An app is
 * a wasmcp_resource with a ui:// URI and mime_type WASMCP_APP_MIME whose
 * meta is {"ui":{"csp":{...},"prefersBorder":true}}; its handler answers
 * with wasmcp_app_html, which repeats the meta on the contents. A tool
 * points at it with meta WASMCP_UI_META(uri), or WASMCP_UI_META_APP_ONLY(uri)
 * for a tool only the app calls. A tool linked to an app still answers
 * text for clients without the extension. */
typedef struct wasmcp_meta {
	const char *target; /* a tool's name or a resource's URI */
	const char *meta;   /* its _meta object, JSON text */
} wasmcp_meta;
#define WASMCP_APP_MIME "text/html;profile=mcp-app"
#define WASMCP_UI_META(uri) "{\"ui\":{\"resourceUri\":\"" uri "\"}}"
#define WASMCP_UI_META_APP_ONLY(uri) "{\"ui\":{\"resourceUri\":\"" uri "\",\"visibility\":[\"app\"]}}"

/* One file of a skill: its path inside the skill ("/"-separated) and its
 * UTF-8 content. A skill is data the host serves as skill:// resources,
 * never code; its SKILL.md has YAML front matter with name and
 * description. */
typedef struct {
	const char *path;
	const char *content;
} wasmcp_skill_file;

typedef struct wasmcp_skill {
	const wasmcp_skill_file *files; /* SKILL.md among them */
	size_t n_files;
} wasmcp_skill;

#define WASMCP_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Defines the wasmcp_call export for plugin p (a wasmcp_plugin). */
#define WASMCP_PLUGIN(p) \
	__attribute__((export_name("wasmcp_call"))) uint32_t wasmcp_call(void) { return wasmcp_run(&(p)); }

uint32_t wasmcp_run(const wasmcp_plugin *p);

/* ---- the request ---- */
const char *wasmcp_method(wasmcp_ctx *ctx);
wasmcp_json wasmcp_params(wasmcp_ctx *ctx);
/* The envelope's context object and its parts. */
wasmcp_json wasmcp_context(wasmcp_ctx *ctx);
/* The value of a "{var}" in the matched resource template, or NULL. */
const char *wasmcp_uri_var(wasmcp_ctx *ctx, const char *name);

/* Argument helpers (NULL / -1 when missing or of the wrong type). */
const char *wasmcp_arg_str(wasmcp_json args, const char *key, size_t *len);
int wasmcp_arg_int(wasmcp_json args, const char *key, int64_t *out);
int wasmcp_arg_num(wasmcp_json args, const char *key, double *out);
int wasmcp_arg_bool(wasmcp_json args, const char *key, int *out);
/* wasmcp_arg_str for an argument the tool cannot do without: when it is
 * missing or not a string, the result becomes the tool error
 * "\"KEY\" (a string) is required" and NULL is returned. */
const char *wasmcp_arg_str_required(wasmcp_ctx *ctx, wasmcp_json args, const char *key, size_t *len);

/* ---- results ---- */
/* Tool content / prompt text / resource text. For tools: a text content
 * item; for prompts: a message (role "user") with text; for resources: a
 * text entry for the requested URI. */
void wasmcp_text(wasmcp_ctx *ctx, const char *text, size_t len);
void wasmcp_textz(wasmcp_ctx *ctx, const char *text);
void wasmcp_textf(wasmcp_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Tool content: an image or audio clip (data is raw bytes; base64-encoded
 * by the SDK). */
void wasmcp_image(wasmcp_ctx *ctx, const void *data, size_t len, const char *mime_type);
void wasmcp_audio(wasmcp_ctx *ctx, const void *data, size_t len, const char *mime_type);
/* A raw JSON item appended to the method's list (content / messages /
 * contents / completion values). */
void wasmcp_item_raw(wasmcp_ctx *ctx, const char *json, size_t len);
/* Prompt message with an explicit role ("user" or "assistant"). */
void wasmcp_prompt_message(wasmcp_ctx *ctx, const char *role, const char *text);
/* Prompt message of role whose content is an image (raw bytes, as for
 * wasmcp_image). */
void wasmcp_prompt_image(wasmcp_ctx *ctx, const char *role, const void *data, size_t len, const char *mime_type);
void wasmcp_prompt_description(wasmcp_ctx *ctx, const char *description);
/* Resource contents for uri (NULL = the requested URI). */
void wasmcp_resource_text(wasmcp_ctx *ctx, const char *uri, const char *mime_type, const char *text, size_t len);
void wasmcp_resource_blob(wasmcp_ctx *ctx, const char *uri, const char *mime_type, const void *data, size_t len);
/* The contents of the app being read: html (len bytes) as WASMCP_APP_MIME,
 * with the _meta of the wasmcp_resource the read is for. */
void wasmcp_app_html(wasmcp_ctx *ctx, const char *html, size_t len);
/* Completion values. */
void wasmcp_complete_value(wasmcp_ctx *ctx, const char *value);
void wasmcp_complete_total(wasmcp_ctx *ctx, int64_t total, int has_more);
/* Structured tool output: returns a writer positioned where the value goes;
 * write exactly one JSON value (usually an object) into it. If the tool
 * adds no content, the SDK adds a text item with the same JSON. */
wasmcp_buf *wasmcp_structured(wasmcp_ctx *ctx);
/* Marks the tool result isError: true and adds message as text. */
void wasmcp_tool_error(wasmcp_ctx *ctx, const char *message);
void wasmcp_tool_errorf(wasmcp_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A JSON-RPC error (status 1) instead of a result. data_json may be NULL. */
void wasmcp_rpc_error(wasmcp_ctx *ctx, int code, const char *message, const char *data_json);
/* Replaces the whole result with result_json (the caller vouches for it). */
void wasmcp_result_raw(wasmcp_ctx *ctx, const char *result_json, size_t len);

/* ---- input_required (ABI section 6) ---- */
/* Adds one input request; params_json is the MCP params object. */
void wasmcp_input_request(wasmcp_ctx *ctx, const char *key, const char *method, const char *params_json);
/* Turns the result into {"resultType":"input_required", ...}. */
void wasmcp_input_required(wasmcp_ctx *ctx, const char *request_state);
/* context.inputResponses[key] (missing on a first call). */
wasmcp_json wasmcp_input_response(wasmcp_ctx *ctx, const char *key);
/* context.requestState, or NULL. */
const char *wasmcp_request_state(wasmcp_ctx *ctx);

/* ---- output cap ---- */
/* The host traps the plugin on the first byte over its output cap (an
 * operator setting the plugin cannot read). Set a soft limit here and the
 * SDK answers with a clean error instead (isError for tools, -32603
 * otherwise) when a result would exceed it. 0 (default) = no soft limit. */
void wasmcp_set_output_limit(size_t max_bytes);

/* ---- host calls (ABI section 5) ---- */
/* Fast log line (no JSON, always allowed). */
void wasmcp_log(int level, const char *msg);
void wasmcp_logf(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Generic call: params_json is JSON text (NULL = {}). On success returns 0
 * and *result (optional) is the parsed result. On failure returns a
 * negative errno; for WASMCP_EFAILED wasmcp_last_error has code/message. */
int wasmcp_host_call(wasmcp_ctx *ctx, const char *method, const char *params_json, size_t params_len, wasmcp_json *result);

typedef struct {
	int err;             /* errno of the last failed host call, 0 if none */
	int64_t code;        /* with WASMCP_EFAILED: the host's error code */
	const char *message; /* with WASMCP_EFAILED: the host's message, else NULL */
	const char *method;  /* the method that failed */
} wasmcp_error;
const wasmcp_error *wasmcp_last_error(wasmcp_ctx *ctx);
/* Short name of an errno ("denied", "canceled", ...). */
const char *wasmcp_strerror(int err);
/* Turns a failed host call into a tool error the model can read, e.g.
 * "config/get failed: denied (not granted by the operator)". */
void wasmcp_tool_error_host(wasmcp_ctx *ctx, int err);

/* Structured log through the host (logger may be NULL; data_json is JSON). */
int wasmcp_log_json(wasmcp_ctx *ctx, int level, const char *logger, const char *data_json);
/* total < 0 = unknown; message may be NULL. No-op without a progressToken. */
int wasmcp_progress(wasmcp_ctx *ctx, double progress, double total, const char *message);
int wasmcp_notify_list_changed(wasmcp_ctx *ctx, const char *kind);
/* task/start: tells the host that this call, running as a task, is under
 * way; the client gets its task handle at once instead of after the first
 * round or 500 ms. Before it an input_required round is answered with no
 * task; after it input_required makes the task input_required. Outside a
 * task it does nothing. */
int wasmcp_task_start(wasmcp_ctx *ctx);
int wasmcp_notify_resource_updated(wasmcp_ctx *ctx, const char *uri);
/* config/get: *value is the value (string values decoded, others as JSON). */
int wasmcp_config_get(wasmcp_ctx *ctx, const char *key, const char **value);
/* kv/get: returns 1 and sets *value and *len if found, 0 if absent, or errno. */
int wasmcp_kv_get(wasmcp_ctx *ctx, const char *key, const char **value, size_t *len);
/* kv/set: ttl_s <= 0 means no expiry. */
int wasmcp_kv_set(wasmcp_ctx *ctx, const char *key, const char *value, size_t len, int64_t ttl_s);
int wasmcp_kv_delete(wasmcp_ctx *ctx, const char *key);
/* kv/list: *keys is the array of keys; *next_cursor NULL at the end. */
int wasmcp_kv_list(wasmcp_ctx *ctx, const char *prefix, const char *cursor, wasmcp_json *keys, const char **next_cursor);

typedef struct {
	const char *method;       /* NULL = "GET" */
	const char *url;
	const char *headers_json; /* JSON object of header: value, or NULL */
	const void *body;
	size_t body_len;
	int body_binary;          /* send as body_base64 */
	int64_t timeout_ms;       /* <= 0 = host default */
} wasmcp_http_request;

typedef struct {
	int status;
	wasmcp_json headers;
	const unsigned char *body; /* decoded from body or body_base64 */
	size_t body_len;
} wasmcp_http_response;

int wasmcp_http_fetch(wasmcp_ctx *ctx, const wasmcp_http_request *req, wasmcp_http_response *resp);

#ifdef __cplusplus
}
#endif
#endif /* WASMCP_H */

/* ======================================================================== */
#if defined(WASMCP_IMPLEMENTATION) && !defined(WASMCP_IMPLEMENTED)
#define WASMCP_IMPLEMENTED

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { WASMCP__TOOL = 1, WASMCP__RESOURCE, WASMCP__PROMPT, WASMCP__COMPLETE };

#define WASMCP__MAX_VARS 8

struct wasmcp_ctx {
	const wasmcp_plugin *plugin;
	wasmcp_json_doc env;
	const char *method;
	wasmcp_json params, context;
	int kind;
	const char *uri;
	int n_vars;
	const char *var_names[WASMCP__MAX_VARS];
	const char *var_values[WASMCP__MAX_VARS];

	wasmcp_buf items; /* comma-separated list items */
	int n_items;
	wasmcp_buf structured;
	int has_structured;
	int is_error;
	const char *description;
	int64_t total;
	int has_total, has_more;

	int rpc_code;
	const char *rpc_msg, *rpc_data;

	wasmcp_buf raw;
	int has_raw;
	wasmcp_buf inreq;
	int n_inreq;
	int input_required;
	const char *state;

	wasmcp_error err;
};

static size_t wasmcp__out_limit;

void wasmcp_set_output_limit(size_t max_bytes) { wasmcp__out_limit = max_bytes; }

const char *wasmcp_method(wasmcp_ctx *ctx) { return ctx->method; }
wasmcp_json wasmcp_params(wasmcp_ctx *ctx) { return ctx->params; }
wasmcp_json wasmcp_context(wasmcp_ctx *ctx) { return ctx->context; }

const char *wasmcp_uri_var(wasmcp_ctx *ctx, const char *name) {
	for (int i = 0; i < ctx->n_vars; i++)
		if (strcmp(ctx->var_names[i], name) == 0) return ctx->var_values[i];
	return NULL;
}

const char *wasmcp_arg_str(wasmcp_json args, const char *key, size_t *len) {
	return wasmcp_json_str(wasmcp_json_get(args, key), len);
}
const char *wasmcp_arg_str_required(wasmcp_ctx *ctx, wasmcp_json args, const char *key, size_t *len) {
	const char *s = wasmcp_arg_str(args, key, len);
	if (s) return s;
	static const char tail[] = "\" (a string) is required";
	size_t k = strlen(key);
	char *msg = (char *)wasmcp_alloc(1 + k + sizeof tail);
	if (msg) {
		msg[0] = '"';
		memcpy(msg + 1, key, k);
		memcpy(msg + 1 + k, tail, sizeof tail);
	}
	wasmcp_tool_error(ctx, msg ? msg : "a required argument is missing");
	return NULL;
}
int wasmcp_arg_int(wasmcp_json args, const char *key, int64_t *out) {
	return wasmcp_json_int(wasmcp_json_get(args, key), out);
}
int wasmcp_arg_num(wasmcp_json args, const char *key, double *out) {
	return wasmcp_json_num(wasmcp_json_get(args, key), out);
}
int wasmcp_arg_bool(wasmcp_json args, const char *key, int *out) {
	return wasmcp_json_bool(wasmcp_json_get(args, key), out);
}

/* ---- results ---- */

/* wasmcp_w_key for quoted, a key already quoted and followed by its ':'
 * (n bytes); WASMCP__KEY takes a literal key with nothing to escape. */
static void wasmcp__w_keyq(wasmcp_buf *b, const char *quoted, size_t n) {
	wasmcp__sep(b);
	wasmcp_buf_put(b, quoted, n);
	b->after_key = 1;
}
#define WASMCP__KEY(b, lit) wasmcp__w_keyq((b), "\"" lit "\":", sizeof lit + 2)

static void wasmcp__item_sep(wasmcp_ctx *ctx) {
	if (ctx->n_items++) wasmcp_buf_put(&ctx->items, ",", 1);
}

/* wasmcp__item starts the next item of the result: the writer of
 * ctx->items, at the top level. */
static wasmcp_buf *wasmcp__item(wasmcp_ctx *ctx) {
	wasmcp__item_sep(ctx);
	ctx->items.depth = 0;
	ctx->items.after_key = 0;
	return &ctx->items;
}

/* wasmcp__resource_item starts a resource contents item: its uri (the
 * read's own when NULL) and, when given, mimeType; the caller writes the
 * text or blob and ends the object. */
static wasmcp_buf *wasmcp__resource_item(wasmcp_ctx *ctx, const char *uri, const char *mime_type) {
	wasmcp_buf *b = wasmcp__item(ctx);
	wasmcp_w_obj(b);
	wasmcp_w_key(b, "uri");
	wasmcp_w_str(b, uri ? uri : ctx->uri);
	if (mime_type) {
		wasmcp_w_key(b, "mimeType");
		wasmcp_w_str(b, mime_type);
	}
	return b;
}

void wasmcp_item_raw(wasmcp_ctx *ctx, const char *json, size_t len) {
	wasmcp__item_sep(ctx);
	wasmcp_buf_put(&ctx->items, json, len);
}

/* wasmcp__content starts a content block of type, as the content of a
 * prompt message of role when role is not NULL; the caller writes the
 * rest and ends it with wasmcp__content_end. */
static wasmcp_buf *wasmcp__content(wasmcp_ctx *ctx, const char *role, const char *type) {
	wasmcp_buf *b = wasmcp__item(ctx);
	wasmcp_w_obj(b);
	if (role) {
		wasmcp_w_key(b, "role");
		wasmcp_w_str(b, role);
		wasmcp_w_key(b, "content");
		wasmcp_w_obj(b);
	}
	WASMCP__KEY(b, "type");
	wasmcp_w_str(b, type);
	return b;
}

static void wasmcp__content_end(wasmcp_buf *b, const char *role) {
	if (role) wasmcp_w_end_obj(b);
	wasmcp_w_end_obj(b);
}

static void wasmcp__text_item(wasmcp_ctx *ctx, const char *role, const char *text, size_t len) {
	wasmcp_buf *b = wasmcp__content(ctx, role, "text");
	WASMCP__KEY(b, "text");
	wasmcp_w_strn(b, text, len);
	wasmcp__content_end(b, role);
}

void wasmcp_resource_text(wasmcp_ctx *ctx, const char *uri, const char *mime_type, const char *text, size_t len) {
	wasmcp_buf *b = wasmcp__resource_item(ctx, uri, mime_type);
	wasmcp_w_key(b, "text");
	wasmcp_w_strn(b, text, len);
	wasmcp_w_end_obj(b);
}

static const char *wasmcp__meta_of(const wasmcp_plugin *p, const char *target);

void wasmcp_app_html(wasmcp_ctx *ctx, const char *html, size_t len) {
	wasmcp_buf *b = wasmcp__resource_item(ctx, NULL, WASMCP_APP_MIME);
	wasmcp_w_key(b, "text");
	wasmcp_w_strn(b, html, len);
	const char *meta = wasmcp__meta_of(ctx->plugin, ctx->uri);
	if (meta) { /* valid: describe checked it, or the host refused the plugin */
		wasmcp_w_key(b, "_meta");
		wasmcp_w_raw(b, meta, strlen(meta));
	}
	wasmcp_w_end_obj(b);
}

void wasmcp_resource_blob(wasmcp_ctx *ctx, const char *uri, const char *mime_type, const void *data, size_t len) {
	wasmcp_buf *b = wasmcp__resource_item(ctx, uri, mime_type);
	wasmcp_w_key(b, "blob");
	wasmcp_w_base64(b, data, len);
	wasmcp_w_end_obj(b);
}

void wasmcp_text(wasmcp_ctx *ctx, const char *text, size_t len) {
	switch (ctx->kind) {
	case WASMCP__PROMPT: wasmcp__text_item(ctx, "user", text, len); break;
	case WASMCP__RESOURCE: wasmcp_resource_text(ctx, NULL, NULL, text, len); break;
	case WASMCP__COMPLETE: wasmcp_w_strn(wasmcp__item(ctx), text, len); break;
	default: wasmcp__text_item(ctx, NULL, text, len);
	}
}

void wasmcp_textz(wasmcp_ctx *ctx, const char *text) { wasmcp_text(ctx, text, strlen(text)); }

static char *wasmcp__vfmt(const char *fmt, va_list ap, size_t *len) {
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0) return NULL;
	char *s = (char *)wasmcp_alloc((size_t)n + 1);
	if (!s) return NULL;
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	if (len) *len = (size_t)n;
	return s;
}

void wasmcp_textf(wasmcp_ctx *ctx, const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	size_t n = 0;
	char *s = wasmcp__vfmt(fmt, ap, &n);
	va_end(ap);
	if (s) wasmcp_text(ctx, s, n);
}

/* wasmcp__media adds an image or audio content block, as the content of a
 * prompt message of role when role is not NULL. */
static void wasmcp__media(wasmcp_ctx *ctx, const char *role, const char *type, const void *data, size_t len, const char *mime_type) {
	wasmcp_buf *b = wasmcp__content(ctx, role, type);
	wasmcp_w_key(b, "data");
	wasmcp_w_base64(b, data, len);
	wasmcp_w_key(b, "mimeType");
	wasmcp_w_str(b, mime_type);
	wasmcp__content_end(b, role);
}

void wasmcp_image(wasmcp_ctx *ctx, const void *data, size_t len, const char *mime_type) {
	wasmcp__media(ctx, NULL, "image", data, len, mime_type);
}

void wasmcp_audio(wasmcp_ctx *ctx, const void *data, size_t len, const char *mime_type) {
	wasmcp__media(ctx, NULL, "audio", data, len, mime_type);
}

void wasmcp_prompt_image(wasmcp_ctx *ctx, const char *role, const void *data, size_t len, const char *mime_type) {
	wasmcp__media(ctx, role, "image", data, len, mime_type);
}

void wasmcp_prompt_message(wasmcp_ctx *ctx, const char *role, const char *text) {
	wasmcp__text_item(ctx, role, text, strlen(text));
}

void wasmcp_prompt_description(wasmcp_ctx *ctx, const char *description) {
	ctx->description = wasmcp_strndup(description, strlen(description));
}

void wasmcp_complete_value(wasmcp_ctx *ctx, const char *value) {
	wasmcp_w_str(wasmcp__item(ctx), value);
}

void wasmcp_complete_total(wasmcp_ctx *ctx, int64_t total, int has_more) {
	ctx->total = total;
	ctx->has_total = total >= 0;
	ctx->has_more = has_more;
}

wasmcp_buf *wasmcp_structured(wasmcp_ctx *ctx) {
	if (ctx->has_structured) { /* a second call starts over */
		ctx->structured.len = 0;
		ctx->structured.depth = 0;
		ctx->structured.after_key = 0;
	}
	ctx->has_structured = 1;
	return &ctx->structured;
}

void wasmcp_tool_error(wasmcp_ctx *ctx, const char *message) {
	ctx->is_error = 1;
	wasmcp_textz(ctx, message);
}

void wasmcp_tool_errorf(wasmcp_ctx *ctx, const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	char *s = wasmcp__vfmt(fmt, ap, NULL);
	va_end(ap);
	wasmcp_tool_error(ctx, s ? s : "error");
}

void wasmcp_rpc_error(wasmcp_ctx *ctx, int code, const char *message, const char *data_json) {
	ctx->rpc_code = code;
	ctx->rpc_msg = wasmcp_strndup(message, strlen(message));
	ctx->rpc_data = data_json ? wasmcp_strndup(data_json, strlen(data_json)) : NULL;
}

void wasmcp_result_raw(wasmcp_ctx *ctx, const char *json, size_t len) {
	ctx->raw.len = 0;
	wasmcp_buf_put(&ctx->raw, json, len);
	ctx->has_raw = 1;
}

void wasmcp_input_request(wasmcp_ctx *ctx, const char *key, const char *method, const char *params_json) {
	wasmcp_buf b = ctx->inreq;
	b.depth = 1;
	b.first[1] = ctx->n_inreq == 0;
	b.after_key = 0;
	wasmcp_w_key(&b, key);
	wasmcp_w_obj(&b);
	wasmcp_w_key(&b, "method");
	wasmcp_w_str(&b, method);
	wasmcp_w_key(&b, "params");
	if (params_json) wasmcp_w_raw(&b, params_json, strlen(params_json));
	else wasmcp_w_raw(&b, "{}", 2);
	wasmcp_w_end_obj(&b);
	ctx->inreq = b;
	ctx->n_inreq++;
}

void wasmcp_input_required(wasmcp_ctx *ctx, const char *request_state) {
	ctx->input_required = 1;
	ctx->state = request_state ? wasmcp_strndup(request_state, strlen(request_state)) : NULL;
}

wasmcp_json wasmcp_input_response(wasmcp_ctx *ctx, const char *key) {
	return wasmcp_json_get(wasmcp_json_get(ctx->context, "inputResponses"), key);
}

const char *wasmcp_request_state(wasmcp_ctx *ctx) {
	return wasmcp_json_str(wasmcp_json_get(ctx->context, "requestState"), NULL);
}

/* ---- host calls ---- */

void wasmcp_log(int level, const char *msg) { wasmcp_log_raw(level, msg, (uint32_t)strlen(msg)); }

void wasmcp_logf(int level, const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	size_t n = 0;
	char *s = wasmcp__vfmt(fmt, ap, &n);
	va_end(ap);
	if (s) wasmcp_log_raw(level, s, (uint32_t)n);
}

const char *wasmcp_strerror(int err) {
	switch (err) {
	case WASMCP_OK: return "ok";
	case WASMCP_EDENIED: return "denied (not granted by the operator)";
	case WASMCP_EBADPARAMS: return "bad params";
	case WASMCP_ECANCELED: return "canceled or past the deadline";
	case WASMCP_ETOOBIG: return "too big";
	case WASMCP_EFAILED: return "failed";
	case WASMCP_EUNSUPPORTED: return "unsupported by this client or connection";
	case WASMCP_EUNKNOWN: return "unknown method";
	case WASMCP_ENOMEM: return "out of memory";
	case WASMCP_EPROTO: return "unexpected answer from the host";
	default: return "unknown error";
	}
}

const wasmcp_error *wasmcp_last_error(wasmcp_ctx *ctx) { return &ctx->err; }

static int wasmcp__fail(wasmcp_ctx *ctx, const char *method, int err) {
	ctx->err.err = err;
	ctx->err.method = method;
	return err;
}

int wasmcp_host_call(wasmcp_ctx *ctx, const char *method, const char *params, size_t plen, wasmcp_json *result) {
	method = wasmcp_strndup(method, strlen(method));
	if (!method) return WASMCP_ENOMEM;
	ctx->err.err = 0;
	ctx->err.code = 0;
	ctx->err.message = NULL;
	ctx->err.method = method;
	if (!params) params = "{}", plen = 2;
	int32_t r = wasmcp_call_raw(method, (uint32_t)strlen(method), params, (uint32_t)plen);
	if (r < 0) {
		if (r == WASMCP_EFAILED) {
			/* The error JSON's size is not reported: read up to 4 KiB. */
			char *e = (char *)wasmcp_alloc(4096);
			if (e) {
				uint32_t n = wasmcp_result_read(e, 4096);
				wasmcp_json_doc d;
				if (n <= 4096 && wasmcp_json_parse(e, n, &d) == 0) {
					wasmcp_json root = wasmcp_json_root(&d);
					wasmcp_json_int(wasmcp_json_get(root, "code"), &ctx->err.code);
					ctx->err.message = wasmcp_json_str(wasmcp_json_get(root, "message"), NULL);
				}
			}
		}
		return wasmcp__fail(ctx, method, r);
	}
	char *buf = (char *)wasmcp_alloc((size_t)r + 1);
	if (!buf) return wasmcp__fail(ctx, method, WASMCP_ENOMEM);
	size_t got = 0;
	while (got < (size_t)r) {
		uint32_t n = wasmcp_result_read(buf + got, (uint32_t)((size_t)r - got));
		if (n == 0) break;
		got += n;
	}
	if (!result) return 0;
	wasmcp_json_doc *d = (wasmcp_json_doc *)wasmcp_alloc(sizeof *d);
	if (!d) return wasmcp__fail(ctx, method, WASMCP_ENOMEM);
	if (got != (size_t)r || wasmcp_json_parse(buf, got, d)) return wasmcp__fail(ctx, method, WASMCP_EPROTO);
	*result = wasmcp_json_root(d);
	return 0;
}

void wasmcp_tool_error_host(wasmcp_ctx *ctx, int err) {
	const char *m = ctx->err.method ? ctx->err.method : "host call";
	if (err == WASMCP_EFAILED && ctx->err.message)
		wasmcp_tool_errorf(ctx, "%s failed: %s (code %lld)", m, ctx->err.message, (long long)ctx->err.code);
	else
		wasmcp_tool_errorf(ctx, "%s failed: %s", m, wasmcp_strerror(err));
}

/* Runs a call whose params are built in b; frees b. */
static int wasmcp__call_buf(wasmcp_ctx *ctx, const char *method, wasmcp_buf *b, wasmcp_json *result) {
	int r;
	if (b->oom) r = wasmcp__fail(ctx, method, WASMCP_ENOMEM);
	else r = wasmcp_host_call(ctx, method, b->p, b->len, result);
	wasmcp_buf_free(b);
	return r;
}

int wasmcp_log_json(wasmcp_ctx *ctx, int level, const char *logger, const char *data_json) {
	static const char *names[] = {"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"};
	if (level < 0) level = 0;
	if (level > 7) level = 7;
	wasmcp_buf b = {0};
	wasmcp_w_obj(&b);
	wasmcp_w_key(&b, "level");
	wasmcp_w_str(&b, names[level]);
	if (logger) {
		wasmcp_w_key(&b, "logger");
		wasmcp_w_str(&b, logger);
	}
	wasmcp_w_key(&b, "data");
	wasmcp_w_raw(&b, data_json ? data_json : "null", data_json ? strlen(data_json) : 4);
	wasmcp_w_end_obj(&b);
	return wasmcp__call_buf(ctx, "log", &b, NULL);
}

int wasmcp_progress(wasmcp_ctx *ctx, double progress, double total, const char *message) {
	wasmcp_buf b = {0};
	wasmcp_w_obj(&b);
	wasmcp_w_key(&b, "progress");
	wasmcp_w_num(&b, progress);
	if (total >= 0) {
		wasmcp_w_key(&b, "total");
		wasmcp_w_num(&b, total);
	}
	if (message) {
		wasmcp_w_key(&b, "message");
		wasmcp_w_str(&b, message);
	}
	wasmcp_w_end_obj(&b);
	return wasmcp__call_buf(ctx, "progress", &b, NULL);
}

static int wasmcp__call_kv(wasmcp_ctx *ctx, const char *method, const char *k1, const char *v1, wasmcp_json *result) {
	wasmcp_buf b = {0};
	wasmcp_w_obj(&b);
	wasmcp_w_key(&b, k1);
	wasmcp_w_str(&b, v1);
	wasmcp_w_end_obj(&b);
	return wasmcp__call_buf(ctx, method, &b, result);
}

int wasmcp_notify_list_changed(wasmcp_ctx *ctx, const char *kind) {
	return wasmcp__call_kv(ctx, "notify/list_changed", "kind", kind, NULL);
}

int wasmcp_task_start(wasmcp_ctx *ctx) {
	return wasmcp_host_call(ctx, "task/start", "{}", 2, NULL);
}

int wasmcp_notify_resource_updated(wasmcp_ctx *ctx, const char *uri) {
	return wasmcp__call_kv(ctx, "notify/resource_updated", "uri", uri, NULL);
}

int wasmcp_config_get(wasmcp_ctx *ctx, const char *key, const char **value) {
	wasmcp_json res;
	int r = wasmcp__call_kv(ctx, "config/get", "key", key, &res);
	if (r) return r;
	wasmcp_json v = wasmcp_json_get(res, "value");
	if (wasmcp_json_type(v) == WASMCP_JSON_STRING) *value = wasmcp_json_str(v, NULL);
	else {
		size_t n;
		const char *raw = wasmcp_json_raw(v, &n);
		if (!raw) return wasmcp__fail(ctx, ctx->err.method, WASMCP_EPROTO);
		*value = wasmcp_strndup(raw, n);
	}
	return *value ? 0 : wasmcp__fail(ctx, ctx->err.method, WASMCP_ENOMEM);
}

int wasmcp_kv_get(wasmcp_ctx *ctx, const char *key, const char **value, size_t *len) {
	wasmcp_json res;
	int r = wasmcp__call_kv(ctx, "kv/get", "key", key, &res);
	if (r) return r;
	wasmcp_json v = wasmcp_json_get(res, "value");
	int t = wasmcp_json_type(v);
	if (t == WASMCP_JSON_NULL || t == WASMCP_JSON_MISSING) return 0;
	if (t != WASMCP_JSON_STRING) return wasmcp__fail(ctx, ctx->err.method, WASMCP_EPROTO);
	*value = wasmcp_json_str(v, len);
	return 1;
}

int wasmcp_kv_set(wasmcp_ctx *ctx, const char *key, const char *value, size_t len, int64_t ttl_s) {
	wasmcp_buf b = {0};
	wasmcp_w_obj(&b);
	wasmcp_w_key(&b, "key");
	wasmcp_w_str(&b, key);
	wasmcp_w_key(&b, "value");
	wasmcp_w_strn(&b, value, len);
	if (ttl_s > 0) {
		wasmcp_w_key(&b, "ttl_s");
		wasmcp_w_int(&b, ttl_s);
	}
	wasmcp_w_end_obj(&b);
	return wasmcp__call_buf(ctx, "kv/set", &b, NULL);
}

int wasmcp_kv_delete(wasmcp_ctx *ctx, const char *key) {
	return wasmcp__call_kv(ctx, "kv/delete", "key", key, NULL);
}

int wasmcp_kv_list(wasmcp_ctx *ctx, const char *prefix, const char *cursor, wasmcp_json *keys, const char **next_cursor) {
	wasmcp_buf b = {0};
	wasmcp_w_obj(&b);
	wasmcp_w_key(&b, "prefix");
	wasmcp_w_str(&b, prefix ? prefix : "");
	if (cursor) {
		wasmcp_w_key(&b, "cursor");
		wasmcp_w_str(&b, cursor);
	}
	wasmcp_w_end_obj(&b);
	wasmcp_json res;
	int r = wasmcp__call_buf(ctx, "kv/list", &b, &res);
	if (r) return r;
	*keys = wasmcp_json_get(res, "keys");
	if (next_cursor) *next_cursor = wasmcp_json_str(wasmcp_json_get(res, "cursor"), NULL);
	return 0;
}

int wasmcp_http_fetch(wasmcp_ctx *ctx, const wasmcp_http_request *req, wasmcp_http_response *resp) {
	wasmcp_buf b = {0};
	wasmcp_w_obj(&b);
	wasmcp_w_key(&b, "method");
	wasmcp_w_str(&b, req->method ? req->method : "GET");
	wasmcp_w_key(&b, "url");
	wasmcp_w_str(&b, req->url);
	if (req->headers_json) {
		wasmcp_w_key(&b, "headers");
		wasmcp_w_raw(&b, req->headers_json, strlen(req->headers_json));
	}
	if (req->body) {
		if (req->body_binary) {
			wasmcp_w_key(&b, "body_base64");
			wasmcp_w_base64(&b, req->body, req->body_len);
		} else {
			wasmcp_w_key(&b, "body");
			wasmcp_w_strn(&b, (const char *)req->body, req->body_len);
		}
	}
	if (req->timeout_ms > 0) {
		wasmcp_w_key(&b, "timeout_ms");
		wasmcp_w_int(&b, req->timeout_ms);
	}
	wasmcp_w_end_obj(&b);
	wasmcp_json res;
	int r = wasmcp__call_buf(ctx, "http/fetch", &b, &res);
	if (r) return r;
	int64_t status = 0;
	if (wasmcp_json_int(wasmcp_json_get(res, "status"), &status)) return wasmcp__fail(ctx, "http/fetch", WASMCP_EPROTO);
	resp->status = (int)status;
	resp->headers = wasmcp_json_get(res, "headers");
	resp->body = NULL;
	resp->body_len = 0;
	wasmcp_json body = wasmcp_json_get(res, "body");
	wasmcp_json b64 = wasmcp_json_get(res, "body_base64");
	if (wasmcp_json_type(body) == WASMCP_JSON_STRING) {
		resp->body = (const unsigned char *)wasmcp_json_str(body, &resp->body_len);
	} else if (wasmcp_json_type(b64) == WASMCP_JSON_STRING) {
		size_t n;
		const char *s = wasmcp_json_str(b64, &n);
		resp->body = s ? wasmcp_base64_decode(s, n, &resp->body_len) : NULL;
		if (!resp->body) return wasmcp__fail(ctx, "http/fetch", WASMCP_EPROTO);
	}
	return 0;
}

/* ---- dispatch ---- */

/* Matches uri against tmpl; on success stores the variables in ctx. */
static int wasmcp__match(wasmcp_ctx *ctx, const char *tmpl, const char *uri) {
	ctx->n_vars = 0;
	const char *t = tmpl, *u = uri;
	while (*t) {
		if (*t != '{') {
			if (*t != *u) return 0;
			t++, u++;
			continue;
		}
		const char *close = strchr(t, '}');
		if (!close) return 0;
		int reserved = t[1] == '+';
		const char *name = t + 1 + reserved;
		size_t nlen = (size_t)(close - name);
		t = close + 1;
		/* The variable runs to the next literal character of the template
		 * (or the end); it must be non-empty. */
		const char *end = u;
		if (*t == 0 || *t == '{') {
			end = u + strlen(u);
			if (!reserved) { const char *sl = strchr(u, '/'); if (sl) end = sl; }
		} else {
			while (*end && *end != *t && (reserved || *end != '/')) end++;
		}
		if (end == u || ctx->n_vars >= WASMCP__MAX_VARS) return 0;
		ctx->var_names[ctx->n_vars] = wasmcp_strndup(name, nlen);
		ctx->var_values[ctx->n_vars] = wasmcp_strndup(u, (size_t)(end - u));
		ctx->n_vars++;
		u = end;
	}
	return *u == 0;
}

/* Writes JSON text s as the value of key after validating it. */
static int wasmcp__w_json_field(wasmcp_buf *b, const char *key, const char *s) {
	wasmcp_json_doc d;
	if (wasmcp_json_parse(s, strlen(s), &d)) return -1;
	wasmcp_w_key(b, key);
	wasmcp_w_raw(b, s, strlen(s));
	return 0;
}

/* Writes the string member key: s, or nothing if s is NULL. */
static void wasmcp__w_opt_str(wasmcp_buf *b, const char *key, const char *s) {
	if (s) {
		wasmcp_w_key(b, key);
		wasmcp_w_str(b, s);
	}
}

/* The _meta text wasmcp_plugin.metas gives target, or NULL. */
static const char *wasmcp__meta_of(const wasmcp_plugin *p, const char *target) {
	for (size_t i = 0; target && i < p->n_metas; i++) {
		if (p->metas[i].target && strcmp(p->metas[i].target, target) == 0) return p->metas[i].meta;
	}
	return NULL;
}

/* Writes a resource or a resource template: {uri_key: uri, name,
 * description?, mimeType?, _meta?}; -1 if meta is not valid JSON. */
static int wasmcp__w_resource(wasmcp_buf *b, const char *uri_key, const char *uri, const char *name,
			      const char *description, const char *mime_type, const char *meta) {
	wasmcp_w_obj(b);
	wasmcp_w_key(b, uri_key);
	wasmcp_w_str(b, uri);
	wasmcp_w_key(b, "name");
	wasmcp_w_str(b, name);
	wasmcp__w_opt_str(b, "description", description);
	wasmcp__w_opt_str(b, "mimeType", mime_type);
	if (meta && wasmcp__w_json_field(b, "_meta", meta)) return -1;
	wasmcp_w_end_obj(b);
	return 0;
}

/* The describe error for a bad task_tools entry. */
static const char wasmcp__bad_task[] = "task_tools: each entry needs the name of a tool and support \"optional\", \"required\" or \"forbidden\"";

/* Writes "execution":{"taskSupport":...} for tool name if task_tools makes
 * it optional or required; -1 if its entry's support is not one of the
 * three values. */
static int wasmcp__w_task_support(const wasmcp_plugin *p, const char *name, wasmcp_buf *b) {
	for (size_t i = 0; i < p->n_task_tools; i++) {
		const char *s = p->task_tools[i].support;
		if (!p->task_tools[i].tool || strcmp(p->task_tools[i].tool, name) != 0) continue;
		if (s && strcmp(s, "forbidden") == 0) return 0;
		if (!s || (strcmp(s, "optional") != 0 && strcmp(s, "required") != 0)) return -1;
		wasmcp_w_key(b, "execution");
		wasmcp_w_obj(b);
		wasmcp_w_key(b, "taskSupport");
		wasmcp_w_str(b, s);
		wasmcp_w_end_obj(b);
		return 0;
	}
	return 0;
}

static int wasmcp__describe(const wasmcp_plugin *p, wasmcp_buf *b, const char **bad) {
	wasmcp_w_obj(b);
	wasmcp_w_key(b, "abi");
	wasmcp_w_int(b, WASMCP_ABI);
	wasmcp_w_key(b, "name");
	wasmcp_w_str(b, p->name);
	wasmcp__w_opt_str(b, "version", p->version);
	wasmcp__w_opt_str(b, "description", p->description);
	wasmcp_w_key(b, "tools");
	wasmcp_w_arr(b);
	for (size_t i = 0; i < p->n_tools; i++) {
		const wasmcp_tool *t = &p->tools[i];
		*bad = t->name;
		wasmcp_w_obj(b);
		wasmcp_w_key(b, "name");
		wasmcp_w_str(b, t->name);
		wasmcp__w_opt_str(b, "description", t->description);
		if (wasmcp__w_json_field(b, "inputSchema", t->input_schema ? t->input_schema : "{\"type\":\"object\"}")) return -1;
		if (t->output_schema && wasmcp__w_json_field(b, "outputSchema", t->output_schema)) return -1;
		if (t->annotations && wasmcp__w_json_field(b, "annotations", t->annotations)) return -1;
		const char *meta = wasmcp__meta_of(p, t->name);
		if (meta && wasmcp__w_json_field(b, "_meta", meta)) return -1;
		if (wasmcp__w_task_support(p, t->name, b)) {
			*bad = wasmcp__bad_task;
			return -1;
		}
		wasmcp_w_end_obj(b);
	}
	wasmcp_w_end_arr(b);
	for (size_t i = 0; i < p->n_task_tools; i++) {
		const wasmcp_task_tool *tt = &p->task_tools[i];
		size_t j = 0;
		*bad = wasmcp__bad_task;
		while (j < p->n_tools && !(tt->tool && strcmp(tt->tool, p->tools[j].name) == 0)) j++;
		if (j == p->n_tools) return -1; /* names no tool */
	}
	wasmcp_w_key(b, "resources");
	wasmcp_w_arr(b);
	for (size_t i = 0; i < p->n_resources; i++) {
		const wasmcp_resource *r = &p->resources[i];
		*bad = r->uri;
		if (wasmcp__w_resource(b, "uri", r->uri, r->name, r->description, r->mime_type, wasmcp__meta_of(p, r->uri))) return -1;
	}
	wasmcp_w_end_arr(b);
	wasmcp_w_key(b, "resourceTemplates");
	wasmcp_w_arr(b);
	for (size_t i = 0; i < p->n_templates; i++) {
		const wasmcp_resource_template *r = &p->templates[i];
		wasmcp__w_resource(b, "uriTemplate", r->uri_template, r->name, r->description, r->mime_type, NULL);
	}
	wasmcp_w_end_arr(b);
	wasmcp_w_key(b, "prompts");
	wasmcp_w_arr(b);
	for (size_t i = 0; i < p->n_prompts; i++) {
		const wasmcp_prompt *q = &p->prompts[i];
		*bad = q->name;
		wasmcp_w_obj(b);
		wasmcp_w_key(b, "name");
		wasmcp_w_str(b, q->name);
		wasmcp__w_opt_str(b, "description", q->description);
		if (q->arguments && wasmcp__w_json_field(b, "arguments", q->arguments)) return -1;
		wasmcp_w_end_obj(b);
	}
	wasmcp_w_end_arr(b);
	wasmcp_w_key(b, "completions");
	wasmcp_w_bool(b, p->complete != NULL);
	*bad = "capabilities";
	if (p->capabilities && wasmcp__w_json_field(b, "capabilities", p->capabilities)) return -1;
	if (p->n_skills) {
		wasmcp_w_key(b, "skills");
		wasmcp_w_arr(b);
		for (size_t i = 0; i < p->n_skills; i++) {
			const wasmcp_skill *sk = &p->skills[i];
			wasmcp_w_obj(b);
			wasmcp_w_key(b, "files");
			wasmcp_w_obj(b);
			for (size_t j = 0; j < sk->n_files; j++) {
				wasmcp_w_key(b, sk->files[j].path);
				wasmcp_w_str(b, sk->files[j].content);
			}
			wasmcp_w_end_obj(b);
			wasmcp_w_end_obj(b);
		}
		wasmcp_w_end_arr(b);
	}
	wasmcp_w_end_obj(b);
	return 0;
}

static void wasmcp__write_rpc_error(wasmcp_buf *o, int code, const char *msg, const char *data) {
	o->len = 0;
	o->depth = 0;
	o->after_key = 0;
	wasmcp_w_obj(o);
	wasmcp_w_key(o, "code");
	wasmcp_w_int(o, code);
	wasmcp_w_key(o, "message");
	wasmcp_w_str(o, msg);
	if (data) { wasmcp_w_key(o, "data"); wasmcp_w_raw(o, data, strlen(data)); }
	wasmcp_w_end_obj(o);
}

/* Assembles the result of a handler into o; returns the status. */
static uint32_t wasmcp__finish(wasmcp_ctx *ctx, wasmcp_buf *o) {
	if (ctx->rpc_code) {
		wasmcp__write_rpc_error(o, ctx->rpc_code, ctx->rpc_msg ? ctx->rpc_msg : "error", ctx->rpc_data);
		return WASMCP_STATUS_ERROR;
	}
	if (ctx->input_required) {
		wasmcp_w_obj(o);
		wasmcp_w_key(o, "resultType");
		wasmcp_w_str(o, "input_required");
		wasmcp_w_key(o, "inputRequests");
		wasmcp_w_raw(o, "{", 1);
		wasmcp_buf_put(o, ctx->inreq.p, ctx->inreq.len);
		wasmcp_buf_put(o, "}", 1);
		if (ctx->state) { wasmcp_w_key(o, "requestState"); wasmcp_w_str(o, ctx->state); }
		wasmcp_w_end_obj(o);
		if (ctx->inreq.oom) o->oom = 1;
		return WASMCP_STATUS_OK;
	}
	if (ctx->has_raw) {
		wasmcp_buf_put(o, ctx->raw.p, ctx->raw.len);
		if (ctx->raw.oom) o->oom = 1;
		return WASMCP_STATUS_OK;
	}
	if (ctx->items.oom || ctx->structured.oom) o->oom = 1;
	wasmcp_w_obj(o);
	switch (ctx->kind) {
	case WASMCP__TOOL:
		if (ctx->has_structured && ctx->n_items == 0 && ctx->structured.len)
			wasmcp__text_item(ctx, NULL, ctx->structured.p, ctx->structured.len);
		WASMCP__KEY(o, "content");
		break;
	case WASMCP__RESOURCE: wasmcp_w_key(o, "contents"); break;
	case WASMCP__PROMPT:
		if (ctx->description) { wasmcp_w_key(o, "description"); wasmcp_w_str(o, ctx->description); }
		wasmcp_w_key(o, "messages");
		break;
	case WASMCP__COMPLETE:
		wasmcp_w_key(o, "completion");
		wasmcp_w_obj(o);
		wasmcp_w_key(o, "values");
		break;
	}
	wasmcp_w_raw(o, "[", 1);
	wasmcp_buf_put(o, ctx->items.p, ctx->items.len);
	wasmcp_buf_put(o, "]", 1);
	if (ctx->kind == WASMCP__TOOL) {
		if (ctx->has_structured && ctx->structured.len) {
			wasmcp_w_key(o, "structuredContent");
			wasmcp_w_raw(o, ctx->structured.p, ctx->structured.len);
		}
		if (ctx->is_error) { wasmcp_w_key(o, "isError"); wasmcp_w_bool(o, 1); }
	}
	if (ctx->kind == WASMCP__COMPLETE) {
		if (ctx->has_total) { wasmcp_w_key(o, "total"); wasmcp_w_int(o, ctx->total); }
		if (ctx->has_more) { wasmcp_w_key(o, "hasMore"); wasmcp_w_bool(o, 1); }
		wasmcp_w_end_obj(o);
	}
	wasmcp_w_end_obj(o);
	return WASMCP_STATUS_OK;
}

static uint32_t wasmcp__dispatch(wasmcp_ctx *ctx, wasmcp_buf *o) {
	const wasmcp_plugin *p = ctx->plugin;
	const char *m = ctx->method;
	if (strcmp(m, "wasmcp/describe") == 0) {
		const char *bad = p->name;
		if (wasmcp__describe(p, o, &bad)) {
			char *msg = (char *)wasmcp_alloc(strlen(bad) + 64);
			if (msg) sprintf(msg, bad == wasmcp__bad_task ? "plugin manifest: %s" : "plugin manifest: invalid JSON in %s", bad);
			wasmcp__write_rpc_error(o, WASMCP_RPC_INTERNAL, msg ? msg : "plugin manifest: invalid JSON", NULL);
			return WASMCP_STATUS_ERROR;
		}
		return WASMCP_STATUS_OK;
	}
	if (strcmp(m, "tools/call") == 0) {
		ctx->kind = WASMCP__TOOL;
		wasmcp_json name = WASMCP__GET(ctx->params, "name");
		for (size_t i = 0; i < p->n_tools; i++) {
			if (wasmcp_json_eq(name, p->tools[i].name)) {
				p->tools[i].fn(ctx, WASMCP__GET(ctx->params, "arguments"));
				return wasmcp__finish(ctx, o);
			}
		}
		wasmcp_rpc_error(ctx, WASMCP_RPC_INVALID_PARAMS, "unknown tool", NULL);
		return wasmcp__finish(ctx, o);
	}
	if (strcmp(m, "resources/read") == 0) {
		ctx->kind = WASMCP__RESOURCE;
		ctx->uri = wasmcp_json_str(wasmcp_json_get(ctx->params, "uri"), NULL);
		if (ctx->uri) {
			for (size_t i = 0; i < p->n_resources; i++) {
				if (strcmp(p->resources[i].uri, ctx->uri) == 0) {
					p->resources[i].fn(ctx, ctx->uri);
					return wasmcp__finish(ctx, o);
				}
			}
			for (size_t i = 0; i < p->n_templates; i++) {
				if (wasmcp__match(ctx, p->templates[i].uri_template, ctx->uri)) {
					p->templates[i].fn(ctx, ctx->uri);
					return wasmcp__finish(ctx, o);
				}
			}
		}
		wasmcp_buf d = {0};
		wasmcp_w_obj(&d);
		wasmcp_w_key(&d, "uri");
		wasmcp_w_str(&d, ctx->uri ? ctx->uri : "");
		wasmcp_w_end_obj(&d);
		wasmcp_buf_put(&d, "", 1);
		wasmcp_rpc_error(ctx, WASMCP_RPC_RESOURCE_NOT_FOUND, "Resource not found", d.oom ? NULL : d.p);
		wasmcp_buf_free(&d);
		return wasmcp__finish(ctx, o);
	}
	if (strcmp(m, "prompts/get") == 0) {
		ctx->kind = WASMCP__PROMPT;
		wasmcp_json name = wasmcp_json_get(ctx->params, "name");
		for (size_t i = 0; i < p->n_prompts; i++) {
			if (wasmcp_json_eq(name, p->prompts[i].name)) {
				p->prompts[i].fn(ctx, wasmcp_json_get(ctx->params, "arguments"));
				return wasmcp__finish(ctx, o);
			}
		}
		wasmcp_rpc_error(ctx, WASMCP_RPC_INVALID_PARAMS, "unknown prompt", NULL);
		return wasmcp__finish(ctx, o);
	}
	if (strcmp(m, "completion/complete") == 0) {
		ctx->kind = WASMCP__COMPLETE;
		if (p->complete) p->complete(ctx, ctx->params);
		return wasmcp__finish(ctx, o);
	}
	wasmcp__write_rpc_error(o, WASMCP_RPC_METHOD_NOT_FOUND, "Method not found", NULL);
	return WASMCP_STATUS_ERROR;
}

/* What calls reuse: the context, and the memory of the result and of its
 * items while it is at most WASMCP__KEEP bytes (the malloc calls saved cost
 * the instrumented guest fuel as well as time). A call runs to completion
 * before the next one starts. */
#define WASMCP__KEEP (64 << 10)
static wasmcp_ctx wasmcp__ctx;
static wasmcp_buf wasmcp__kept_out, wasmcp__kept_items;

/* Empties b, keeping its memory in *kept if it is small enough. */
static void wasmcp__keep(wasmcp_buf *b, wasmcp_buf *kept) {
	if (b->cap > WASMCP__KEEP) wasmcp_buf_free(b);
	memset(kept, 0, sizeof *kept);
	kept->p = b->p;
	kept->cap = b->cap;
}

uint32_t wasmcp_run(const wasmcp_plugin *p) {
	wasmcp_ctx *ctx = &wasmcp__ctx;
	memset(ctx, 0, sizeof *ctx);
	wasmcp_buf o = wasmcp__kept_out;
	ctx->items = wasmcp__kept_items;
	uint32_t status = 2;
	ctx->plugin = p;
	uint32_t n = wasmcp_input_len();
	char *in = (char *)wasmcp_alloc(n ? n : 1);
	if (!in) goto out;
	uint32_t got = 0;
	while (got < n) {
		uint32_t r = wasmcp_input_read(in + got, n - got);
		if (r == 0) break;
		got += r;
	}
	if (got != n || wasmcp_json_parse(in, n, &ctx->env)) {
		wasmcp__write_rpc_error(&o, -32600, "invalid request envelope", NULL);
		status = WASMCP_STATUS_ERROR;
	} else {
		wasmcp_json root = wasmcp_json_root(&ctx->env);
		ctx->method = wasmcp_json_str(WASMCP__GET(root, "method"), NULL);
		ctx->params = WASMCP__GET(root, "params");
		ctx->context = WASMCP__GET(root, "context");
		if (!ctx->method) {
			wasmcp__write_rpc_error(&o, -32600, "invalid request envelope", NULL);
			status = WASMCP_STATUS_ERROR;
		} else {
			status = wasmcp__dispatch(ctx, &o);
		}
	}
	if (o.oom) {
		status = 2; /* out of memory: let the host report a plugin failure */
		goto out;
	}
	if (wasmcp__out_limit && o.len > wasmcp__out_limit) {
		char msg[96];
		snprintf(msg, sizeof msg, "result too large: %zu bytes over the plugin's limit of %zu", o.len, wasmcp__out_limit);
		o.len = 0;
		o.depth = 0;
		o.after_key = 0;
		if (ctx->kind == WASMCP__TOOL && status == WASMCP_STATUS_OK) {
			wasmcp_w_obj(&o);
			wasmcp_w_key(&o, "content");
			wasmcp_w_arr(&o);
			wasmcp_w_obj(&o);
			wasmcp_w_key(&o, "type");
			wasmcp_w_str(&o, "text");
			wasmcp_w_key(&o, "text");
			wasmcp_w_str(&o, msg);
			wasmcp_w_end_obj(&o);
			wasmcp_w_end_arr(&o);
			wasmcp_w_key(&o, "isError");
			wasmcp_w_bool(&o, 1);
			wasmcp_w_end_obj(&o);
		} else {
			wasmcp__write_rpc_error(&o, WASMCP_RPC_INTERNAL, msg, NULL);
			status = WASMCP_STATUS_ERROR;
		}
	}
	if (o.len) wasmcp_output_write(o.p, (uint32_t)o.len);
out:
	wasmcp__keep(&o, &wasmcp__kept_out);
	wasmcp__keep(&ctx->items, &wasmcp__kept_items);
	wasmcp_buf_free(&ctx->structured);
	wasmcp_buf_free(&ctx->raw);
	wasmcp_buf_free(&ctx->inreq);
	wasmcp_arena_reset();
	return status;
}

#endif /* WASMCP_IMPLEMENTATION */
