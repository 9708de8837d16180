/*
 * c-hash: hashing and encoding tools for wasmcp, written in C against
 * sdk/c/wasmcp.h. Tools: sha256, crc32, base64_encode, base64_decode,
 * hex_encode, hex_decode. Resource template: hash://sha256/{text}.
 */
#define WASMCP_IMPLEMENTATION
#include "wasmcp.h"

#include <string.h>

/* ---- SHA-256 (FIPS 180-4) ---- */

typedef struct {
	uint32_t h[8];
	uint64_t bytes;
	unsigned char buf[64];
	size_t n;
} sha256_ctx;

static const uint32_t K[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha256_block(sha256_ctx *c, const unsigned char *p) {
	uint32_t w[64], a, b, d, e, f, g, h, cc;
	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (int i = 16; i < 64; i++) {
		uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	a = c->h[0], b = c->h[1], cc = c->h[2], d = c->h[3];
	e = c->h[4], f = c->h[5], g = c->h[6], h = c->h[7];
	for (int i = 0; i < 64; i++) {
		uint32_t t1 = h + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
		uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & cc) ^ (b & cc));
		h = g, g = f, f = e, e = d + t1, d = cc, cc = b, b = a, a = t1 + t2;
	}
	c->h[0] += a, c->h[1] += b, c->h[2] += cc, c->h[3] += d;
	c->h[4] += e, c->h[5] += f, c->h[6] += g, c->h[7] += h;
}

static void sha256(const void *data, size_t len, unsigned char out[32]) {
	sha256_ctx c = {{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19}, 0, {0}, 0};
	const unsigned char *p = (const unsigned char *)data;
	c.bytes = len;
	while (len >= 64) {
		sha256_block(&c, p);
		p += 64, len -= 64;
	}
	memcpy(c.buf, p, len);
	c.buf[len++] = 0x80;
	if (len > 56) {
		memset(c.buf + len, 0, 64 - len);
		sha256_block(&c, c.buf);
		len = 0;
	}
	memset(c.buf + len, 0, 56 - len);
	uint64_t bits = c.bytes * 8;
	for (int i = 0; i < 8; i++) c.buf[63 - i] = (unsigned char)(bits >> (8 * i));
	sha256_block(&c, c.buf);
	for (int i = 0; i < 8; i++) {
		out[4 * i] = (unsigned char)(c.h[i] >> 24);
		out[4 * i + 1] = (unsigned char)(c.h[i] >> 16);
		out[4 * i + 2] = (unsigned char)(c.h[i] >> 8);
		out[4 * i + 3] = (unsigned char)c.h[i];
	}
}

/* ---- CRC-32 (IEEE 802.3, as zlib and PNG) ---- */

static uint32_t crc32(const unsigned char *p, size_t n) {
	uint32_t c = 0xFFFFFFFFu;
	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1)));
	}
	return ~c;
}

/* ---- helpers ---- */

static char *to_hex(const unsigned char *p, size_t n, int upper) {
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char *o = (char *)wasmcp_alloc(2 * n + 1);
	if (!o) return NULL;
	for (size_t i = 0; i < n; i++) {
		o[2 * i] = digits[p[i] >> 4];
		o[2 * i + 1] = digits[p[i] & 15];
	}
	o[2 * n] = 0;
	return o;
}

/* The tool's input bytes: "text" (UTF-8) or "base64" (binary), exactly one. */
static const unsigned char *input_bytes(wasmcp_ctx *ctx, wasmcp_json args, size_t *len) {
	size_t tn = 0, bn = 0;
	const char *text = wasmcp_arg_str(args, "text", &tn);
	const char *b64 = wasmcp_arg_str(args, "base64", &bn);
	if ((text != NULL) == (b64 != NULL)) {
		wasmcp_tool_error(ctx, "give exactly one of \"text\" (a string) or \"base64\" (binary data, base64-encoded)");
		return NULL;
	}
	if (text) {
		*len = tn;
		return (const unsigned char *)text;
	}
	const unsigned char *d = wasmcp_base64_decode(b64, bn, len);
	if (!d) wasmcp_tool_error(ctx, "\"base64\" is not valid base64");
	return d;
}

#define INPUT_SCHEMA                                                                                      \
	"{\"type\":\"object\",\"properties\":{"                                                               \
	"\"text\":{\"type\":\"string\",\"description\":\"UTF-8 text to process\"},"                           \
	"\"base64\":{\"type\":\"string\",\"description\":\"binary input, base64-encoded (instead of text)\"}}," \
	"\"additionalProperties\":false}"

/* ---- tools ---- */

static void tool_sha256(wasmcp_ctx *ctx, wasmcp_json args) {
	size_t n;
	const unsigned char *d = input_bytes(ctx, args, &n);
	if (!d) return;
	unsigned char dig[32];
	sha256(d, n, dig);
	wasmcp_buf *s = wasmcp_structured(ctx);
	wasmcp_w_obj(s);
	wasmcp_w_key(s, "sha256");
	wasmcp_w_str(s, to_hex(dig, 32, 0));
	wasmcp_w_key(s, "bytes");
	wasmcp_w_uint(s, n);
	wasmcp_w_end_obj(s);
	wasmcp_textz(ctx, to_hex(dig, 32, 0));
}

static void tool_crc32(wasmcp_ctx *ctx, wasmcp_json args) {
	size_t n;
	const unsigned char *d = input_bytes(ctx, args, &n);
	if (!d) return;
	uint32_t c = crc32(d, n);
	unsigned char be[4] = {(unsigned char)(c >> 24), (unsigned char)(c >> 16), (unsigned char)(c >> 8), (unsigned char)c};
	wasmcp_buf *s = wasmcp_structured(ctx);
	wasmcp_w_obj(s);
	wasmcp_w_key(s, "crc32");
	wasmcp_w_str(s, to_hex(be, 4, 0));
	wasmcp_w_key(s, "value");
	wasmcp_w_uint(s, c);
	wasmcp_w_key(s, "bytes");
	wasmcp_w_uint(s, n);
	wasmcp_w_end_obj(s);
	wasmcp_textz(ctx, to_hex(be, 4, 0));
}

static void tool_base64_encode(wasmcp_ctx *ctx, wasmcp_json args) {
	size_t n, m;
	const char *text = wasmcp_arg_str_required(ctx, args, "text", &n);
	if (!text) return;
	int url = 0;
	wasmcp_arg_bool(args, "url_safe", &url);
	char *out = wasmcp_base64_encode(text, n, &m);
	if (!out) {
		wasmcp_tool_error(ctx, "out of memory");
		return;
	}
	if (url) {
		for (size_t i = 0; i < m; i++) out[i] = out[i] == '+' ? '-' : out[i] == '/' ? '_' : out[i];
		while (m > 0 && out[m - 1] == '=') m--;
	}
	wasmcp_text(ctx, out, m);
}

/* Answers decoded bytes: as text when they are UTF-8, else as hex. */
static void answer_bytes(wasmcp_ctx *ctx, const unsigned char *d, size_t n) {
	wasmcp_buf *s = wasmcp_structured(ctx);
	wasmcp_w_obj(s);
	wasmcp_w_key(s, "bytes");
	wasmcp_w_uint(s, n);
	if (wasmcp_utf8_valid((const char *)d, n)) {
		wasmcp_w_key(s, "text");
		wasmcp_w_strn(s, (const char *)d, n);
		wasmcp_w_end_obj(s);
		wasmcp_text(ctx, (const char *)d, n);
		return;
	}
	char *hex = to_hex(d, n, 0);
	wasmcp_w_key(s, "hex");
	wasmcp_w_str(s, hex);
	wasmcp_w_end_obj(s);
	wasmcp_textf(ctx, "(%zu bytes, not UTF-8 text; hex) %s", n, hex ? hex : "");
}

static void tool_base64_decode(wasmcp_ctx *ctx, wasmcp_json args) {
	size_t n, m;
	const char *data = wasmcp_arg_str(args, "data", &n);
	if (!data) {
		wasmcp_tool_error(ctx, "\"data\" (a base64 string) is required");
		return;
	}
	/* tolerate whitespace and line breaks (MIME style) */
	char *clean = (char *)wasmcp_alloc(n + 1);
	size_t k = 0;
	for (size_t i = 0; clean && i < n; i++)
		if (data[i] != ' ' && data[i] != '\n' && data[i] != '\r' && data[i] != '\t') clean[k++] = data[i];
	const unsigned char *d = clean ? wasmcp_base64_decode(clean, k, &m) : NULL;
	if (!d) {
		wasmcp_tool_error(ctx, "\"data\" is not valid base64 (standard or URL-safe alphabet)");
		return;
	}
	answer_bytes(ctx, d, m);
}

static void tool_hex_encode(wasmcp_ctx *ctx, wasmcp_json args) {
	size_t n;
	const char *text = wasmcp_arg_str_required(ctx, args, "text", &n);
	if (!text) return;
	int upper = 0;
	wasmcp_arg_bool(args, "uppercase", &upper);
	wasmcp_textz(ctx, to_hex((const unsigned char *)text, n, upper));
}

static int hexval(char c) {
	if (c >= '0' && c <= '9') return c - '0';
	if (c >= 'a' && c <= 'f') return c - 'a' + 10;
	if (c >= 'A' && c <= 'F') return c - 'A' + 10;
	return -1;
}

static void tool_hex_decode(wasmcp_ctx *ctx, wasmcp_json args) {
	size_t n;
	const char *hex = wasmcp_arg_str_required(ctx, args, "hex", &n);
	if (!hex) return;
	if (n >= 2 && hex[0] == '0' && (hex[1] == 'x' || hex[1] == 'X')) hex += 2, n -= 2;
	unsigned char *o = (unsigned char *)wasmcp_alloc(n / 2 + 1);
	size_t m = 0;
	int hi = -1;
	for (size_t i = 0; o && i < n; i++) {
		char c = hex[i];
		if (c == ' ' || c == ':' || c == '\n' || c == '\t' || c == '-') {
			if (hi >= 0) break; /* separator inside a byte */
			continue;
		}
		int v = hexval(c);
		if (v < 0) {
			wasmcp_tool_errorf(ctx, "\"hex\" has a non-hex character at offset %zu", i);
			return;
		}
		if (hi < 0) hi = v;
		else {
			o[m++] = (unsigned char)(hi << 4 | v);
			hi = -1;
		}
	}
	if (!o || hi >= 0) {
		wasmcp_tool_error(ctx, "\"hex\" has an odd number of digits");
		return;
	}
	answer_bytes(ctx, o, m);
}

/* hash://sha256/{text}: the SHA-256 of the (percent-decoded) text. */
static void res_sha256(wasmcp_ctx *ctx, const char *uri) {
	const char *t = wasmcp_uri_var(ctx, "text");
	size_t n = strlen(t), m = 0;
	char *dec = (char *)wasmcp_alloc(n + 1);
	for (size_t i = 0; dec && i < n; i++) {
		if (t[i] == '%' && i + 2 < n && hexval(t[i + 1]) >= 0 && hexval(t[i + 2]) >= 0) {
			dec[m++] = (char)(hexval(t[i + 1]) << 4 | hexval(t[i + 2]));
			i += 2;
		} else dec[m++] = t[i];
	}
	unsigned char dig[32];
	sha256(dec, m, dig);
	char *h = to_hex(dig, 32, 0);
	wasmcp_resource_text(ctx, uri, "text/plain", h, 64);
}

static const wasmcp_tool tools[] = {
	{"sha256", "SHA-256 digest (hex) of text or base64-encoded bytes", INPUT_SCHEMA,
	 "{\"type\":\"object\",\"properties\":{\"sha256\":{\"type\":\"string\"},\"bytes\":{\"type\":\"integer\"}},\"required\":[\"sha256\",\"bytes\"]}",
	 "{\"readOnlyHint\":true,\"idempotentHint\":true}", tool_sha256},
	{"crc32", "CRC-32 (IEEE, as zlib/PNG) of text or base64-encoded bytes", INPUT_SCHEMA,
	 "{\"type\":\"object\",\"properties\":{\"crc32\":{\"type\":\"string\"},\"value\":{\"type\":\"integer\"},\"bytes\":{\"type\":\"integer\"}},\"required\":[\"crc32\",\"value\",\"bytes\"]}",
	 "{\"readOnlyHint\":true,\"idempotentHint\":true}", tool_crc32},
	{"base64_encode", "Base64-encode UTF-8 text",
	 "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"},\"url_safe\":{\"type\":\"boolean\",\"description\":\"URL-safe alphabet, no padding\"}},\"required\":[\"text\"]}",
	 NULL, "{\"readOnlyHint\":true}", tool_base64_encode},
	{"base64_decode", "Decode base64 (standard or URL-safe); answers text, or hex for binary data",
	 "{\"type\":\"object\",\"properties\":{\"data\":{\"type\":\"string\"}},\"required\":[\"data\"]}",
	 "{\"type\":\"object\",\"properties\":{\"bytes\":{\"type\":\"integer\"},\"text\":{\"type\":\"string\"},\"hex\":{\"type\":\"string\"}},\"required\":[\"bytes\"]}",
	 "{\"readOnlyHint\":true}", tool_base64_decode},
	{"hex_encode", "Hex-encode UTF-8 text",
	 "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"},\"uppercase\":{\"type\":\"boolean\"}},\"required\":[\"text\"]}",
	 NULL, "{\"readOnlyHint\":true}", tool_hex_encode},
	{"hex_decode", "Decode hex (optional 0x prefix; spaces, colons or dashes between bytes); answers text, or hex for binary data",
	 "{\"type\":\"object\",\"properties\":{\"hex\":{\"type\":\"string\"}},\"required\":[\"hex\"]}",
	 "{\"type\":\"object\",\"properties\":{\"bytes\":{\"type\":\"integer\"},\"text\":{\"type\":\"string\"},\"hex\":{\"type\":\"string\"}},\"required\":[\"bytes\"]}",
	 "{\"readOnlyHint\":true}", tool_hex_decode},
};

static const wasmcp_resource_template templates[] = {
	{"hash://sha256/{text}", "sha256", "SHA-256 (hex) of the percent-decoded text in the URI", "text/plain", res_sha256},
};

static const wasmcp_plugin plugin = {
	.name = "c-hash",
	.version = "1.0.0",
	.description = "Hashing and encoding: SHA-256, CRC-32, base64, hex",
	.tools = tools,
	.n_tools = WASMCP_COUNT(tools),
	.templates = templates,
	.n_templates = WASMCP_COUNT(templates),
};

WASMCP_PLUGIN(plugin)
