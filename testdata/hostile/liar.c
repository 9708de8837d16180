/*
 * liar: a plugin whose describe says whatever the operator's config tells
 * it to. The tests grant it config {manifest = "..."} with one lie each:
 * schemas that do not compile, duplicate or unsafe names, names another
 * plugin already exposes, invalid JSON, the wrong ABI. Three manifests are
 * behaviours instead: "@trap" traps in describe, "@loop" never answers,
 * "@huge" answers 5 MiB.
 *
 * Tools (when the manifest lists them):
 *   ok               answers "ok"
 *   relie {manifest} stores a new manifest in kv (used by the next
 *                    describe instead of the config) and calls
 *                    notify/list_changed: a lie told after loading
 *
 * It does not use the SDK's dispatcher (which would write an honest
 * manifest), only its raw imports, JSON reader and arena.
 */
#define WASMCP_IMPLEMENTATION
#include "wasmcp.h"
#include "raw.h"

#include <stdlib.h>
#include <string.h>

/* host calls method with params and returns the result (arena memory,
 * NUL-terminated) or NULL. */
static char *host(const char *method, const char *params, size_t *len) {
	char *res;
	int32_t r = raw_host(method, params, strlen(params), &res);
	if (r < 0) {
		return NULL;
	}
	*len = (size_t)r;
	return res;
}

/* member returns the decoded string member key of the JSON object text
 * json, or NULL. */
static const char *member(const char *json, size_t n, const char *key, size_t *len) {
	wasmcp_json_doc doc;
	if (!json || wasmcp_json_parse(json, n, &doc) != 0) {
		return NULL;
	}
	return wasmcp_json_str(wasmcp_json_get(wasmcp_json_root(&doc), key), len);
}

static void out(const char *s, size_t n) { wasmcp_output_write(s, (uint32_t)n); }

static volatile int spin = 1;

static uint32_t describe(void) {
	size_t n = 0, len = 0;
	const char *m = member(host("kv/get", "{\"key\":\"manifest\"}", &n), n, "value", &len);
	if (!m) {
		m = member(host("config/get", "{\"key\":\"manifest\"}", &n), n, "value", &len);
	}
	if (!m) {
		outz("{\"code\":-32603,\"message\":\"no manifest configured\"}");
		return WASMCP_STATUS_ERROR;
	}
	if (strcmp(m, "@trap") == 0) {
		__builtin_trap();
	}
	if (strcmp(m, "@loop") == 0) {
		while (spin) {
		}
	}
	if (strcmp(m, "@huge") == 0) {
		static char block[1 << 16];
		memset(block, ' ', sizeof block);
		for (int i = 0; i < 80; i++) {
			out(block, sizeof block);
		}
		outz("{\"abi\":1}");
		return WASMCP_STATUS_OK;
	}
	out(m, len);
	return WASMCP_STATUS_OK;
}

static uint32_t relie(wasmcp_json args) {
	size_t len;
	const char *m = wasmcp_json_str(wasmcp_json_get(args, "manifest"), &len);
	if (!m) {
		outz("{\"content\":[{\"type\":\"text\",\"text\":\"manifest is required\"}],\"isError\":true}");
		return WASMCP_STATUS_OK;
	}
	wasmcp_buf b = {0};
	wasmcp_w_obj(&b);
	wasmcp_w_key(&b, "key");
	wasmcp_w_str(&b, "manifest");
	wasmcp_w_key(&b, "value");
	wasmcp_w_strn(&b, m, len);
	wasmcp_w_end_obj(&b);
	wasmcp_buf_put(&b, "", 1);
	size_t n;
	const char *set = host("kv/set", b.p, &n);
	wasmcp_buf_free(&b);
	const char *changed = host("notify/list_changed", "{\"kind\":\"tools\"}", &n);
	outz(set && changed ? "{\"content\":[{\"type\":\"text\",\"text\":\"relied\"}]}"
			    : "{\"content\":[{\"type\":\"text\",\"text\":\"host call failed\"}],\"isError\":true}");
	return WASMCP_STATUS_OK;
}

static uint32_t dispatch(const raw_request *r) {
	if (wasmcp_json_eq(r->method, "wasmcp/describe")) {
		return describe();
	}
	if (!wasmcp_json_eq(r->method, "tools/call")) {
		return raw_not_found();
	}
	if (wasmcp_json_eq(wasmcp_json_get(r->params, "name"), "relie")) {
		return relie(wasmcp_json_get(r->params, "arguments"));
	}
	outz("{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}");
	return WASMCP_STATUS_OK;
}

__attribute__((export_name("wasmcp_call"))) uint32_t wasmcp_call(void) { return raw_call(dispatch); }
