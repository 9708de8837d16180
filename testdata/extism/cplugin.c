/* cplugin.c: a hyper-mcp v1 plugin (the mcp.run servlet interface) in C
 * on extism.h. Its one tool, upper, returns its text argument in upper
 * case; it is also the benchmark plugin (bench/extism_bench_test.go).
 * Build: testdata/extism/build.sh. */
#include <string.h>

#include "extism.h"

static const char manifest[] =
	"{\"tools\":[{\"name\":\"upper\",\"description\":\"Upper-cases text.\","
	"\"inputSchema\":{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},\"required\":[\"text\"]}}]}";

EXTISM_EXPORT("describe") int32_t describe(void) {
	extism_output((const uint8_t *)manifest, sizeof manifest - 1);
	return 0;
}

static uint8_t in[64 << 10];
static uint8_t out[2 * sizeof in];

/* call finds "text":"..." in {"params":{"name":"upper","arguments":{"text":...}}}
 * and answers {"content":[{"type":"text","text":UPPER}]}. Escapes are
 * copied as they are. */
EXTISM_EXPORT("call") int32_t call(void) {
	static const char key[] = "\"text\":\"";
	static const char head[] = "{\"content\":[{\"type\":\"text\",\"text\":\"";
	static const char tail[] = "\"}]}";
	uint64_t n = extism_input(in, sizeof in - 1);
	if (n >= sizeof in) {
		extism_error("input too large");
		return 1;
	}
	in[n] = 0;
	if (!strstr((char *)in, "\"name\":\"upper\"")) {
		extism_error("unknown tool");
		return 1;
	}
	char *p = strstr((char *)in, key);
	if (!p) {
		extism_error("missing text");
		return 1;
	}
	p += sizeof key - 1;
	size_t o = sizeof head - 1;
	memcpy(out, head, o);
	for (; *p && *p != '"'; p++) {
		char c = *p;
		if (c == '\\' && p[1]) {
			out[o++] = *p++;
			c = *p;
		} else if (c >= 'a' && c <= 'z') {
			c -= 'a' - 'A';
		}
		out[o++] = (uint8_t)c;
	}
	memcpy(out + o, tail, sizeof tail - 1);
	o += sizeof tail - 1;
	extism_output(out, o);
	return 0;
}
