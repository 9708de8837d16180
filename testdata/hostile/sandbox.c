/*
 * sandbox: a C plugin that reaches for what it was not granted.
 *
 *   read {path}    open and read a file: "ok:<first bytes>" or "error:<reason>"
 *   write {path}   create a file and write to it: "ok" or "error:<reason>"
 *   list {path}    list a directory: "ok:<names>" or "error:<reason>"
 *   env            the whole environment, "K=V;K=V;..." ("empty" if none)
 *   fds            every open descriptor 0..1023 with its WASI file type:
 *                  "0:2 1:2 2:2 ..." (a socket would be type 6)
 *
 * Sockets cannot even be imported: see socket.wat.
 */
#define WASMCP_IMPLEMENTATION
#include "wasmcp.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <wasi/api.h>

extern char **environ;

static const char *path_arg(wasmcp_ctx *ctx, wasmcp_json args) {
	size_t n;
	return wasmcp_arg_str_required(ctx, args, "path", &n);
}

/* errno_text answers "error:<reason>" for the errno err. */
static void errno_text(wasmcp_ctx *ctx, int err) { wasmcp_textf(ctx, "error:%s", strerror(err)); }

/* open_arg opens the file named by the argument path with fopen's mode:
 * NULL, the answer written, when there is no path or fopen fails. */
static FILE *open_arg(wasmcp_ctx *ctx, wasmcp_json args, const char *mode) {
	const char *path = path_arg(ctx, args);
	if (!path) {
		return NULL;
	}
	FILE *f = fopen(path, mode);
	if (!f) {
		errno_text(ctx, errno);
	}
	return f;
}

static void read_file(wasmcp_ctx *ctx, wasmcp_json args) {
	FILE *f = open_arg(ctx, args, "r");
	if (!f) {
		return;
	}
	char buf[128];
	size_t n = fread(buf, 1, sizeof buf, f);
	int err = ferror(f) ? errno : 0;
	fclose(f);
	if (err) {
		errno_text(ctx, err);
		return;
	}
	wasmcp_textf(ctx, "ok:%.*s", (int)n, buf);
}

static void write_file(wasmcp_ctx *ctx, wasmcp_json args) {
	FILE *f = open_arg(ctx, args, "w");
	if (!f) {
		return;
	}
	int bad = fputs("written by sandbox\n", f) < 0;
	bad |= fclose(f) != 0;
	if (bad) {
		errno_text(ctx, errno);
		return;
	}
	wasmcp_textz(ctx, "ok");
}

static void list_dir(wasmcp_ctx *ctx, wasmcp_json args) {
	const char *path = path_arg(ctx, args);
	if (!path) {
		return;
	}
	DIR *d = opendir(path);
	if (!d) {
		errno_text(ctx, errno);
		return;
	}
	char out[2048];
	size_t len = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL && len < sizeof out - 300) {
		len += (size_t)snprintf(out + len, sizeof out - len, "%s;", e->d_name);
	}
	closedir(d);
	wasmcp_textf(ctx, "ok:%.*s", (int)len, out);
}

static void env(wasmcp_ctx *ctx, wasmcp_json args) {
	(void)args;
	char out[4096];
	size_t len = 0;
	for (char **e = environ; e && *e && len < sizeof out - 600; e++) {
		len += (size_t)snprintf(out + len, sizeof out - len, "%.500s;", *e);
	}
	if (len == 0) {
		wasmcp_textz(ctx, "empty");
		return;
	}
	wasmcp_text(ctx, out, len);
}

static void fds(wasmcp_ctx *ctx, wasmcp_json args) {
	(void)args;
	char out[4096];
	size_t len = 0;
	for (int fd = 0; fd < 1024 && len < sizeof out - 64; fd++) {
		__wasi_fdstat_t st;
		if (__wasi_fd_fdstat_get((__wasi_fd_t)fd, &st) != 0) {
			continue;
		}
		len += (size_t)snprintf(out + len, sizeof out - len, "%d:%d ", fd, (int)st.fs_filetype);
	}
	wasmcp_text(ctx, out, len);
}

#define PATH_SCHEMA "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"}},\"required\":[\"path\"]}"

static const wasmcp_tool tools[] = {
	{"read", "Read a file", PATH_SCHEMA, NULL, NULL, read_file},
	{"write", "Write a file", PATH_SCHEMA, NULL, NULL, write_file},
	{"list", "List a directory", PATH_SCHEMA, NULL, NULL, list_dir},
	{"env", "The environment", NULL, NULL, NULL, env},
	{"fds", "Open descriptors and their types", NULL, NULL, NULL, fds},
};

static const wasmcp_plugin plugin = {
	.name = "sandbox", .version = "1.0.0", .tools = tools, .n_tools = WASMCP_COUNT(tools),
};
WASMCP_PLUGIN(plugin)
