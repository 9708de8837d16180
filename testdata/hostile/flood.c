/*
 * flood: floods the client and the server log.
 *
 *   logs {n, size}      n fast log lines of size bytes (the log import)
 *   logdata {n, size}   n structured log calls whose data is a size-byte string
 *   progress {n}        n progress notifications
 *   stdio {n}           n bytes to stdout and n to stderr
 *
 * Each answers "done" once it has sent everything.
 */
#define WASMCP_IMPLEMENTATION
#include "wasmcp.h"

#include <stdio.h>
#include <string.h>

static int int_arg(wasmcp_ctx *ctx, wasmcp_json args, const char *key, int64_t max, int64_t *out) {
	*out = 0;
	if (wasmcp_json_is_missing(wasmcp_json_get(args, key))) {
		return 1;
	}
	if (wasmcp_arg_int(args, key, out) != 0 || *out < 0 || *out > max) {
		wasmcp_tool_errorf(ctx, "\"%s\" must be an integer in [0, %lld]", key, (long long)max);
		return 0;
	}
	return 1;
}

static char *filled(size_t n, char c) {
	char *s = wasmcp_alloc(n + 1);
	if (s) {
		memset(s, c, n);
		s[n] = 0;
	}
	return s;
}

static void logs(wasmcp_ctx *ctx, wasmcp_json args) {
	int64_t n, size;
	if (!int_arg(ctx, args, "n", 10000000, &n) || !int_arg(ctx, args, "size", 16 << 20, &size)) {
		return;
	}
	char *msg = filled((size_t)size, 'L');
	if (!msg) {
		wasmcp_tool_error(ctx, "out of memory");
		return;
	}
	for (int64_t i = 0; i < n; i++) {
		wasmcp_log_raw(WASMCP_WARNING, msg, (uint32_t)size);
	}
	wasmcp_textz(ctx, "done");
}

static void logdata(wasmcp_ctx *ctx, wasmcp_json args) {
	int64_t n, size;
	if (!int_arg(ctx, args, "n", 10000000, &n) || !int_arg(ctx, args, "size", 16 << 20, &size)) {
		return;
	}
	char *data = filled((size_t)size + 2, 'D');
	if (!data) {
		wasmcp_tool_error(ctx, "out of memory");
		return;
	}
	data[0] = '"';
	data[size + 1] = '"';
	for (int64_t i = 0; i < n; i++) {
		wasmcp_log_json(ctx, WASMCP_WARNING, "flood", data);
	}
	wasmcp_textz(ctx, "done");
}

static void progress(wasmcp_ctx *ctx, wasmcp_json args) {
	int64_t n;
	if (!int_arg(ctx, args, "n", 10000000, &n)) {
		return;
	}
	for (int64_t i = 0; i < n; i++) {
		wasmcp_progress(ctx, (double)i, (double)n, "flooding");
	}
	wasmcp_textz(ctx, "done");
}

static void stdio(wasmcp_ctx *ctx, wasmcp_json args) {
	int64_t n;
	if (!int_arg(ctx, args, "n", 64 << 20, &n)) {
		return;
	}
	char buf[4096];
	memset(buf, 'S', sizeof buf);
	buf[sizeof buf - 1] = '\n';
	for (int64_t done = 0; done < n; done += (int64_t)sizeof buf) {
		fwrite(buf, 1, sizeof buf, stdout);
		fwrite(buf, 1, sizeof buf, stderr);
	}
	fflush(stdout);
	wasmcp_textz(ctx, "done");
}

#define N_SCHEMA "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\"},\"size\":{\"type\":\"integer\"}}}"

static const wasmcp_tool tools[] = {
	{"logs", "Fast log lines", N_SCHEMA, NULL, NULL, logs},
	{"logdata", "Structured log calls", N_SCHEMA, NULL, NULL, logdata},
	{"progress", "Progress notifications", N_SCHEMA, NULL, NULL, progress},
	{"stdio", "stdout and stderr", N_SCHEMA, NULL, NULL, stdio},
};

static const wasmcp_plugin plugin = {
	.name = "flood", .version = "1.0.0", .tools = tools, .n_tools = WASMCP_COUNT(tools),
};
WASMCP_PLUGIN(plugin)
