/*
 * rogue: a plugin that asks for more than it was granted and speaks for
 * others, without the SDK's dispatcher (only its raw imports, JSON reader,
 * writer and arena), so that it can send whatever it likes.
 *
 * Manifest: the tools below, the resource S://mine and the template
 * S://items/{id}. Config keys it reads when granted (all optional):
 *   scheme       S (default "rogue")
 *   describe_ms  sleeps that long in describe (a plugin slow to load)
 *   items        adds that many tools t0, t1, ... (a huge manifest)
 *
 * Tools:
 *   ask {method, params?}   returns input_required asking the client
 *                           method with params (a JSON text); called again
 *                           with the answer, returns "answered: <answer>"
 *   block {method}          the blocking host call of method with {};
 *                           returns "errno N" or "ok: <result>"
 *   updated {uri, n?}       n (default 1) notify/resource_updated of uri
 *   changed {n}             n notify/list_changed of tools
 */
#define WASMCP_IMPLEMENTATION
#include "wasmcp.h"
#include "raw.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static void outb(wasmcp_buf *b) { wasmcp_output_write(b->p, (uint32_t)b->len); }

/* config_str returns the granted config value of key, or NULL. */
static const char *config_str(const char *key) {
	wasmcp_buf b = {0};
	wasmcp_w_obj(&b);
	wasmcp_w_key(&b, "key");
	wasmcp_w_str(&b, key);
	wasmcp_w_end_obj(&b);
	char *res;
	int32_t r = raw_host("config/get", b.p, b.len, &res);
	wasmcp_buf_free(&b);
	wasmcp_json_doc d;
	if (r < 0 || wasmcp_json_parse(res, (size_t)r, &d) != 0) {
		return NULL;
	}
	return wasmcp_json_str(wasmcp_json_get(wasmcp_json_root(&d), "value"), NULL);
}

/* config returns the granted config value of key as an integer, or 0. */
static long config(const char *key) {
	const char *v = config_str(key);
	return v ? atol(v) : 0;
}

static void text_result(const char *prefix, const char *s, size_t n) {
	wasmcp_buf b = {0};
	size_t pl = strlen(prefix);
	char *t = wasmcp_alloc(pl + n + 1);
	if (!t) {
		outz("{\"content\":[],\"isError\":true}");
		return;
	}
	memcpy(t, prefix, pl);
	memcpy(t + pl, s, n);
	wasmcp_w_obj(&b);
	wasmcp_w_key(&b, "content");
	wasmcp_w_arr(&b);
	wasmcp_w_obj(&b);
	wasmcp_w_key(&b, "type");
	wasmcp_w_str(&b, "text");
	wasmcp_w_key(&b, "text");
	wasmcp_w_strn(&b, t, pl + n);
	wasmcp_w_end_obj(&b);
	wasmcp_w_end_arr(&b);
	wasmcp_w_end_obj(&b);
	outb(&b);
	wasmcp_buf_free(&b);
}

#define STR_ARG "{\"type\":\"string\"}"
#define INT_ARG "{\"type\":\"integer\"}"

static uint32_t describe(void) {
	long ms = config("describe_ms");
	if (ms > 0) {
		/* The host caps each sleep: sleep until the clock says so. */
		struct timespec now, end;
		clock_gettime(CLOCK_MONOTONIC, &end);
		end.tv_sec += ms / 1000;
		end.tv_nsec += (ms % 1000) * 1000000L;
		for (;;) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (now.tv_sec > end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec)) {
				break;
			}
			struct timespec ts = {0, 5000000L};
			nanosleep(&ts, NULL);
		}
	}
	long items = config("items");
	wasmcp_buf b = {0};
	const char *head =
		"{\"abi\":1,\"name\":\"rogue\",\"tools\":["
		"{\"name\":\"ask\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"method\":" STR_ARG ",\"params\":" STR_ARG "}}},"
		"{\"name\":\"block\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"method\":" STR_ARG "}}},"
		"{\"name\":\"updated\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"uri\":" STR_ARG ",\"n\":" INT_ARG "}}},"
		"{\"name\":\"changed\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"n\":" INT_ARG "}}}";
	wasmcp_buf_put(&b, head, strlen(head));
	for (long i = 0; i < items; i++) {
		char item[48];
		int n = snprintf(item, sizeof item, ",{\"name\":\"t%ld\"}", i);
		wasmcp_buf_put(&b, item, (size_t)n);
	}
	const char *scheme = config_str("scheme");
	if (!scheme) {
		scheme = "rogue";
	}
	char tail[256];
	int tn = snprintf(tail, sizeof tail,
		"],\"resources\":[{\"uri\":\"%s://mine\",\"name\":\"mine\"}],"
		"\"resourceTemplates\":[{\"uriTemplate\":\"%s://items/{id}\",\"name\":\"item\"}]}",
		scheme, scheme);
	if (tn < 0 || (size_t)tn >= sizeof tail) {
		return 2;
	}
	wasmcp_buf_put(&b, tail, (size_t)tn);
	if (b.oom) {
		return 2;
	}
	outb(&b);
	wasmcp_buf_free(&b);
	return WASMCP_STATUS_OK;
}

static uint32_t ask(wasmcp_json args, wasmcp_json ctx) {
	size_t len;
	const char *answer = wasmcp_json_raw(wasmcp_json_get(wasmcp_json_get(ctx, "inputResponses"), "q"), &len);
	if (answer) {
		text_result("answered: ", answer, len);
		return WASMCP_STATUS_OK;
	}
	size_t ml, pl = 2;
	const char *method = wasmcp_json_str(wasmcp_json_get(args, "method"), &ml);
	const char *params = wasmcp_json_str(wasmcp_json_get(args, "params"), &pl);
	if (!params) {
		params = "{}", pl = 2;
	}
	if (!method) {
		outz("{\"content\":[{\"type\":\"text\",\"text\":\"method is required\"}],\"isError\":true}");
		return WASMCP_STATUS_OK;
	}
	wasmcp_buf b = {0};
	wasmcp_w_obj(&b);
	wasmcp_w_key(&b, "resultType");
	wasmcp_w_str(&b, "input_required");
	wasmcp_w_key(&b, "inputRequests");
	wasmcp_w_obj(&b);
	wasmcp_w_key(&b, "q");
	wasmcp_w_obj(&b);
	wasmcp_w_key(&b, "method");
	wasmcp_w_strn(&b, method, ml);
	wasmcp_w_key(&b, "params");
	wasmcp_w_raw(&b, params, pl);
	wasmcp_w_end_obj(&b);
	wasmcp_w_end_obj(&b);
	wasmcp_w_key(&b, "requestState");
	wasmcp_w_str(&b, "rogue-1");
	wasmcp_w_end_obj(&b);
	outb(&b);
	wasmcp_buf_free(&b);
	return WASMCP_STATUS_OK;
}

static uint32_t block(wasmcp_json args) {
	const char *method = wasmcp_json_str(wasmcp_json_get(args, "method"), NULL);
	if (!method) {
		outz("{\"content\":[{\"type\":\"text\",\"text\":\"method is required\"}],\"isError\":true}");
		return WASMCP_STATUS_OK;
	}
	char *res;
	int32_t r = raw_host(method, "{}", 2, &res);
	if (r < 0) {
		char msg[32];
		int n = snprintf(msg, sizeof msg, "%d", (int)r);
		text_result("errno ", msg, (size_t)n);
		return WASMCP_STATUS_OK;
	}
	text_result("ok: ", res, strlen(res));
	return WASMCP_STATUS_OK;
}

static uint32_t notify(wasmcp_json args, int updated) {
	int64_t n = 1;
	wasmcp_json jn = wasmcp_json_get(args, "n");
	if (!wasmcp_json_is_missing(jn) && wasmcp_json_int(jn, &n) != 0) {
		n = 1;
	}
	wasmcp_buf b = {0};
	if (updated) {
		size_t ul;
		const char *uri = wasmcp_json_str(wasmcp_json_get(args, "uri"), &ul);
		wasmcp_w_obj(&b);
		wasmcp_w_key(&b, "uri");
		wasmcp_w_strn(&b, uri ? uri : "", uri ? ul : 0);
		wasmcp_w_end_obj(&b);
	} else {
		wasmcp_buf_put(&b, "{\"kind\":\"tools\"}", 16);
	}
	const char *method = updated ? "notify/resource_updated" : "notify/list_changed";
	for (int64_t i = 0; i < n; i++) {
		wasmcp_call_raw(method, (uint32_t)strlen(method), b.p, (uint32_t)b.len);
	}
	wasmcp_buf_free(&b);
	outz("{\"content\":[{\"type\":\"text\",\"text\":\"done\"}]}");
	return WASMCP_STATUS_OK;
}

static uint32_t dispatch(const raw_request *r) {
	wasmcp_json name = wasmcp_json_get(r->params, "name");
	wasmcp_json args = wasmcp_json_get(r->params, "arguments");
	if (wasmcp_json_eq(r->method, "wasmcp/describe")) {
		return describe();
	}
	if (wasmcp_json_eq(r->method, "resources/read")) {
		outz("{\"contents\":[{\"uri\":\"rogue://mine\",\"text\":\"mine\"}]}");
		return WASMCP_STATUS_OK;
	}
	if (!wasmcp_json_eq(r->method, "tools/call")) {
		return raw_not_found();
	}
	if (wasmcp_json_eq(name, "ask")) {
		return ask(args, wasmcp_json_get(r->root, "context"));
	}
	if (wasmcp_json_eq(name, "block")) {
		return block(args);
	}
	if (wasmcp_json_eq(name, "updated") || wasmcp_json_eq(name, "changed")) {
		return notify(args, wasmcp_json_eq(name, "updated"));
	}
	outz("{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}");
	return WASMCP_STATUS_OK;
}

__attribute__((export_name("wasmcp_call"))) uint32_t wasmcp_call(void) { return raw_call(dispatch); }
