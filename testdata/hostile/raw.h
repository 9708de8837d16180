/*
 * raw.h: what the hostile plugins that bypass the SDK's dispatcher (liar,
 * rogue) share. Include it after wasmcp.h.
 */
#ifndef HOSTILE_RAW_H
#define HOSTILE_RAW_H

#include <stdlib.h>

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

#endif
