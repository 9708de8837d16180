/*
 * fetch: http/fetch to whatever URL it is given. The test grants it a few
 * rules and points it at private, loopback, link-local and metadata
 * addresses, directly, through DNS names and through redirects.
 *
 *   fetch {url}   "status N: <first bytes of the body>" or
 *                 "errno E (<name>)[: <host message>]"
 */
#define WASMCP_IMPLEMENTATION
#include "wasmcp.h"

static void fetch(wasmcp_ctx *ctx, wasmcp_json args) {
	size_t n;
	const char *url = wasmcp_arg_str_required(ctx, args, "url", &n);
	if (!url) return;
	wasmcp_http_request req = {.url = url, .timeout_ms = 5000};
	wasmcp_http_response resp;
	int r = wasmcp_http_fetch(ctx, &req, &resp);
	if (r < 0) {
		const wasmcp_error *e = wasmcp_last_error(ctx);
		wasmcp_textf(ctx, "errno %d (%s)%s%s", r, wasmcp_strerror(r), e->message ? ": " : "",
			     e->message ? e->message : "");
		return;
	}
	size_t show = resp.body_len < 64 ? resp.body_len : 64;
	wasmcp_textf(ctx, "status %d: %.*s", resp.status, (int)show, (const char *)resp.body);
}

static const wasmcp_tool tools[] = {
	{"fetch", "Fetch a URL",
	 "{\"type\":\"object\",\"properties\":{\"url\":{\"type\":\"string\"}},\"required\":[\"url\"]}",
	 NULL, NULL, fetch},
};

static const wasmcp_plugin plugin = {
	.name = "fetch", .version = "1.0.0", .tools = tools, .n_tools = WASMCP_COUNT(tools),
	.capabilities = "{\"http\":[\"http://anything/\"]}",
};
WASMCP_PLUGIN(plugin)
