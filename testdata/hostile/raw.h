/*
 * raw.h: what the hostile plugins that bypass the SDK's dispatcher (liar,
 * rogue) share. Include it after wasmcp.h.
 */
#ifndef HOSTILE_RAW_H
#define HOSTILE_RAW_H

#include <stdlib.h>
#include <string.h>

/* outz writes the NUL-terminated s to the call's output. */
static void outz(const char *s) { wasmcp_output_write(s, (uint32_t)strlen(s)); }

/* raw_envelope reads the whole request envelope into *in (malloc'd) and
 * parses it into doc: 0, or the status to return (2) with nothing left to
 * free. */
static uint32_t raw_envelope(char **in, wasmcp_json_doc *doc) {
	uint32_t n = wasmcp_input_len();
	*in = malloc(n + 1);
	if (!*in) {
		return 2;
	}
	uint32_t got = 0;
	while (got < n) {
		uint32_t k = wasmcp_input_read(*in + got, n - got);
		if (k == 0) {
			break;
		}
		got += k;
	}
	if (wasmcp_json_parse(*in, got, doc) != 0) {
		free(*in);
		wasmcp_arena_reset();
		return 2;
	}
	return 0;
}

/* raw_done frees the envelope of raw_envelope and the arena, and returns
 * status. */
static uint32_t raw_done(char *in, uint32_t status) {
	free(in);
	wasmcp_arena_reset();
	return status;
}

/* raw_host calls method with params; returns the errno (negative) or the
 * result length, the result (NUL-terminated arena memory) in *res. */
static int32_t raw_host(const char *method, const char *params, size_t plen, char **res) {
	int32_t r = wasmcp_call_raw(method, (uint32_t)strlen(method), params, (uint32_t)plen);
	*res = NULL;
	if (r < 0) {
		return r;
	}
	char *buf = wasmcp_alloc((size_t)r + 1);
	if (!buf) {
		return -100;
	}
	size_t got = 0;
	while (got < (size_t)r) {
		uint32_t k = wasmcp_result_read(buf + got, (uint32_t)((size_t)r - got));
		if (k == 0) {
			break;
		}
		got += k;
	}
	buf[got] = 0;
	*res = buf;
	return r;
}

/* raw_request is a parsed request envelope's root and its method and
 * params members. */
typedef struct {
	wasmcp_json root, method, params;
} raw_request;

/* raw_not_found answers a method the plugin does not know: -32601. */
static uint32_t raw_not_found(void) {
	outz("{\"code\":-32601,\"message\":\"method not found\"}");
	return WASMCP_STATUS_ERROR;
}

/* raw_call is the body of a raw plugin's wasmcp_call: it reads and parses
 * the envelope (see raw_envelope), returns what dispatch answers it with
 * (the status), and frees it (see raw_done). */
static uint32_t raw_call(uint32_t (*dispatch)(const raw_request *r)) {
	char *in;
	wasmcp_json_doc doc;
	uint32_t status = raw_envelope(&in, &doc);
	if (status != 0) {
		return status;
	}
	raw_request r;
	r.root = wasmcp_json_root(&doc);
	r.method = wasmcp_json_get(r.root, "method");
	r.params = wasmcp_json_get(r.root, "params");
	return raw_done(in, dispatch(&r));
}

#endif
