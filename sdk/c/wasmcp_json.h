/*
 * wasmcp_json.h — a small, bounds-checked JSON reader and writer for wasmcp
 * plugins written in C. Single header, stb style: include it anywhere for
 * the declarations, and define WASMCP_IMPLEMENTATION in exactly one .c file
 * before including it to compile the implementation. (wasmcp.h includes it
 * and forwards WASMCP_IMPLEMENTATION.)
 *
 * Reader: wasmcp_json_parse validates a whole document (RFC 8259; depth at
 * most WASMCP_JSON_MAX_DEPTH) and indexes it. Values are small handles
 * (wasmcp_json) that are safe to use even when missing: every accessor on a
 * missing value or a value of the wrong type returns "missing", NULL or an
 * error code; nothing reads past the source buffer.
 *
 * Writer: wasmcp_buf is a growable byte buffer with helpers that insert
 * commas and escape strings for you. An allocation failure sets buf->oom and
 * turns every later write into a no-op; check it once at the end.
 *
 * Memory: strings decoded by the reader come from the per-call arena
 * (wasmcp_alloc), which the SDK frees when the call ends.
 */
#ifndef WASMCP_JSON_H
#define WASMCP_JSON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef WASMCP_JSON_MAX_DEPTH
#define WASMCP_JSON_MAX_DEPTH 64
#endif

/* Types of a JSON value. WASMCP_JSON_MISSING is "no such value". */
enum {
	WASMCP_JSON_MISSING = 0,
	WASMCP_JSON_NULL,
	WASMCP_JSON_FALSE,
	WASMCP_JSON_TRUE,
	WASMCP_JSON_NUMBER,
	WASMCP_JSON_STRING,
	WASMCP_JSON_ARRAY,
	WASMCP_JSON_OBJECT
};

typedef struct {
	uint8_t type;
	uint32_t start; /* byte offset of the value (for strings: the opening quote) */
	uint32_t end;   /* byte offset just past the value */
	uint32_t skip;  /* nodes in this subtree, itself included */
	uint32_t count; /* array elements or object members */
} wasmcp_json_node;

/* A parsed document. The source must outlive it. */
typedef struct {
	const char *src;
	size_t len;
	wasmcp_json_node *nodes;
	uint32_t n;
} wasmcp_json_doc;

/* A handle to one value of a document; i < 0 means missing. */
typedef struct {
	const wasmcp_json_doc *doc;
	int32_t i;
} wasmcp_json;

/* Per-call arena: memory freed by the SDK after the current call.
 * Returns NULL on exhaustion. */
void *wasmcp_alloc(size_t n);
/* Copies n bytes into the arena and NUL-terminates them. */
char *wasmcp_strndup(const char *s, size_t n);
/* Frees the whole arena (the SDK calls it after each request). */
void wasmcp_arena_reset(void);

/* Parses src[0:len] into doc (nodes come from the arena).
 * Returns 0, or -1 if the text is not valid JSON or too deep. */
int wasmcp_json_parse(const char *src, size_t len, wasmcp_json_doc *doc);
wasmcp_json wasmcp_json_root(const wasmcp_json_doc *doc);
extern const wasmcp_json wasmcp_json_missing;

int wasmcp_json_type(wasmcp_json v);
int wasmcp_json_is_missing(wasmcp_json v);
/* Object member by key (the last one wins if a key repeats), or missing. */
wasmcp_json wasmcp_json_get(wasmcp_json obj, const char *key);
/* Array element by index, or missing. */
wasmcp_json wasmcp_json_at(wasmcp_json arr, size_t idx);
/* Number of array elements or object members (0 otherwise). */
size_t wasmcp_json_len(wasmcp_json v);
/* Iterates an object: *it starts at 0; returns 1 with *key and *val set,
 * 0 at the end. */
int wasmcp_json_next(wasmcp_json obj, uint32_t *it, wasmcp_json *key, wasmcp_json *val);

/* Decoded string (UTF-8, NUL-terminated, arena memory) or NULL if v is not
 * a string. *len (optional) gets the byte length; the string may contain
 * NUL bytes from \u0000 escapes, so trust len over strlen. */
const char *wasmcp_json_str(wasmcp_json v, size_t *len);
/* Number as double / as an exact integer in [-2^53, 2^53]. Return 0 on
 * success, -1 if v is not a number (or not an integer). */
int wasmcp_json_num(wasmcp_json v, double *out);
int wasmcp_json_int(wasmcp_json v, int64_t *out);
/* Boolean: 0 on success, -1 if v is not true or false. */
int wasmcp_json_bool(wasmcp_json v, int *out);
/* The raw JSON text of v (pointer into the source), or NULL if missing. */
const char *wasmcp_json_raw(wasmcp_json v, size_t *len);
/* 1 if v is a string equal to s. */
int wasmcp_json_eq(wasmcp_json v, const char *s);

/* Writer. */
typedef struct {
	char *p;
	size_t len, cap;
	int oom;     /* an allocation failed or nesting was too deep */
	int depth;
	int after_key;
	uint8_t first[WASMCP_JSON_MAX_DEPTH + 1];
} wasmcp_buf;

void wasmcp_buf_free(wasmcp_buf *b);
/* Appends bytes as they are (no separator handling). */
void wasmcp_buf_put(wasmcp_buf *b, const void *s, size_t n);
void wasmcp_w_obj(wasmcp_buf *b);
void wasmcp_w_end_obj(wasmcp_buf *b);
void wasmcp_w_arr(wasmcp_buf *b);
void wasmcp_w_end_arr(wasmcp_buf *b);
void wasmcp_w_key(wasmcp_buf *b, const char *key);
void wasmcp_w_str(wasmcp_buf *b, const char *s);
void wasmcp_w_strn(wasmcp_buf *b, const char *s, size_t n);
void wasmcp_w_int(wasmcp_buf *b, int64_t v);
void wasmcp_w_uint(wasmcp_buf *b, uint64_t v);
/* Non-finite numbers are written as null (JSON has no NaN). */
void wasmcp_w_num(wasmcp_buf *b, double v);
void wasmcp_w_bool(wasmcp_buf *b, int v);
void wasmcp_w_null(wasmcp_buf *b);
/* A value that is already JSON text (the caller vouches for it). */
void wasmcp_w_raw(wasmcp_buf *b, const char *json, size_t n);
/* Base64 (standard alphabet, padded) of data as a JSON string. */
void wasmcp_w_base64(wasmcp_buf *b, const void *data, size_t n);

/* 1 if s[0:n] is valid UTF-8 (strings the writer gets should be; invalid
 * bytes are written as U+FFFD). */
int wasmcp_utf8_valid(const char *s, size_t n);

/* Base64. encode: writes 4*ceil(n/3) bytes plus NUL into the arena.
 * decode: accepts standard or URL-safe alphabet, padding optional,
 * whitespace not allowed; returns NULL on invalid input. */
char *wasmcp_base64_encode(const void *data, size_t n, size_t *out_len);
unsigned char *wasmcp_base64_decode(const char *s, size_t n, size_t *out_len);

#ifdef __cplusplus
}
#endif
#endif /* WASMCP_JSON_H */

/* ------------------------------------------------------------------------ */
#if defined(WASMCP_IMPLEMENTATION) && !defined(WASMCP_JSON_IMPLEMENTED)
#define WASMCP_JSON_IMPLEMENTED

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

/* ---- arena ---- */

/* Allocations are carved from a static buffer while it has room (most
 * calls then allocate nothing from malloc, whose every call costs the
 * instrumented guest its whole body in fuel); a larger one, or one that
 * does not fit, gets a block of its own from malloc. The reset frees the
 * blocks and empties the buffer. Every allocation gets a byte more than
 * asked (room for a NUL) and is 8-aligned. */
#define WASMCP__BUMP 8192

typedef struct wasmcp__block {
	struct wasmcp__block *next;
	size_t size;
} wasmcp__block;

static wasmcp__block *wasmcp__arena; /* the malloc'd blocks, newest first */
static union {
	uint64_t align;
	unsigned char b[WASMCP__BUMP];
} wasmcp__bump;
static size_t wasmcp__bumped; /* bytes of wasmcp__bump in use */
static void *wasmcp__last;    /* the newest allocation, for wasmcp__arena_resize */

/* Under AddressSanitizer (the native tests) the buffer's bytes that no
 * allocation holds are poisoned, as malloc's would be, so that an access
 * past an allocation or after the reset is reported: WASMCP__BUMP_MARK(at,
 * end) makes bytes [at, end) addressable and those from end on poisoned
 * (the gaps that alignment leaves stay poisoned). Elsewhere it is nothing. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WASMCP__ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(WASMCP__ASAN)
#define WASMCP__ASAN 1
#endif
#ifdef WASMCP__ASAN
#include <sanitizer/asan_interface.h>
#define WASMCP__BUMP_MARK(at, end)                                                       \
	do {                                                                                 \
		ASAN_UNPOISON_MEMORY_REGION(wasmcp__bump.b + (at), (end) - (at));                \
		ASAN_POISON_MEMORY_REGION(wasmcp__bump.b + (end), WASMCP__BUMP - (size_t)(end)); \
	} while (0)
#else
#define WASMCP__BUMP_MARK(at, end) ((void)0)
#endif

static int wasmcp__in_bump(const void *p) {
	const unsigned char *c = (const unsigned char *)p;
	return c >= wasmcp__bump.b && c < wasmcp__bump.b + WASMCP__BUMP;
}

/* A block of its own for n bytes (plus the NUL's). */
static void *wasmcp__block_alloc(size_t n) {
	if (n > SIZE_MAX - sizeof(wasmcp__block) - 16) return NULL;
	wasmcp__block *b = (wasmcp__block *)malloc(sizeof(wasmcp__block) + n + 1);
	if (!b) return NULL;
	b->next = wasmcp__arena;
	b->size = n;
	wasmcp__arena = b;
	return (void *)(b + 1);
}

void *wasmcp_alloc(size_t n) {
	size_t at = (wasmcp__bumped + 7) & ~(size_t)7;
	void *p;
	if (at <= WASMCP__BUMP && n < WASMCP__BUMP - at) {
		p = wasmcp__bump.b + at;
		wasmcp__bumped = at + n + 1;
		WASMCP__BUMP_MARK(at, wasmcp__bumped);
	} else if (!(p = wasmcp__block_alloc(n))) {
		return NULL;
	}
	wasmcp__last = p;
	return p;
}

char *wasmcp_strndup(const char *s, size_t n) {
	char *p = (char *)wasmcp_alloc(n + 1);
	if (!p) return NULL;
	if (n) memcpy(p, s, n);
	p[n] = 0;
	return p;
}

/* Resizes p, the arena's newest allocation, from old to n bytes (the
 * parser's node array, which grows while nothing else is allocated):
 * in place in the buffer if it fits, else into a block of its own. */
static void *wasmcp__arena_resize(void *p, size_t old, size_t n) {
	if (p != wasmcp__last || n > SIZE_MAX - sizeof(wasmcp__block) - 16) return NULL;
	if (wasmcp__in_bump(p)) {
		size_t at = (size_t)((unsigned char *)p - wasmcp__bump.b);
		if (n < WASMCP__BUMP - at) {
			wasmcp__bumped = at + n + 1;
			WASMCP__BUMP_MARK(at, wasmcp__bumped);
			return p;
		}
		void *q = wasmcp__block_alloc(n);
		if (!q) return NULL;
		memcpy(q, p, old < n ? old : n);
		wasmcp__bumped = at; /* p is given back */
		WASMCP__BUMP_MARK(at, at);
		wasmcp__last = q;
		return q;
	}
	wasmcp__block *b = (wasmcp__block *)p - 1;
	if (b != wasmcp__arena) return NULL;
	wasmcp__block *nb = (wasmcp__block *)realloc(b, sizeof(wasmcp__block) + n + 1);
	if (!nb) return NULL;
	nb->size = n;
	wasmcp__arena = nb;
	wasmcp__last = nb + 1;
	return (void *)(nb + 1);
}

/* Gives back p, the arena's newest allocation, whole: a block is freed, so
 * that the allocator can merge its memory with what lies around it. */
static void wasmcp__arena_pop(void *p) {
	if (p != wasmcp__last) return;
	wasmcp__last = NULL;
	if (wasmcp__in_bump(p)) {
		wasmcp__bumped = (size_t)((unsigned char *)p - wasmcp__bump.b);
		WASMCP__BUMP_MARK(wasmcp__bumped, wasmcp__bumped);
		return;
	}
	wasmcp__block *b = (wasmcp__block *)p - 1;
	if (b != wasmcp__arena) return;
	wasmcp__arena = b->next;
	free(b);
}

void wasmcp_arena_reset(void) {
	while (wasmcp__arena) {
		wasmcp__block *next = wasmcp__arena->next;
		free(wasmcp__arena);
		wasmcp__arena = next;
	}
	wasmcp__bumped = 0;
	wasmcp__last = NULL;
	WASMCP__BUMP_MARK(0, 0);
}

/* ---- reader ---- */

const wasmcp_json wasmcp_json_missing = {NULL, -1};

/* Documents up to this many bytes are parsed in one pass, into a node
 * array that is guessed (a node per 8 bytes) and doubled as needed; larger
 * ones are counted first and get an array of exactly their nodes. For a
 * large document the guess can be far more than it needs (a long string is
 * one node) and a doubling needs the old and the new array at once, so
 * either could exhaust linear memory that the exact array fits in; and
 * once an sbrk has failed, wasi-libc's malloc no longer grows its last
 * free chunk, so the exact array might not fit afterwards either. */
#define WASMCP__ONE_PASS (64u << 10)

/* One pass builds the nodes: every node starts at a byte of its own, so a
 * document of len bytes has at most len of them, and the array grows by
 * doubling up to that. On exhaustion oom is set and nothing more is
 * stored, but the pass goes on counting (wasmcp_json_parse then fills an
 * array of the exact count). */
typedef struct {
	const char *s;
	size_t len, pos;
	wasmcp_json_node *nodes;
	uint32_t n, cap;
	int oom;
} wasmcp__parser;

/* The loops below keep the position in a local: through p, each step
 * would load and store it (a char may alias it). */
static void wasmcp__ws(wasmcp__parser *p) {
	const char *s = p->s;
	size_t i = p->pos, len = p->len;
	while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) i++;
	p->pos = i;
}

static int wasmcp__hex(char c) {
	if (c >= '0' && c <= '9') return c - '0';
	if (c >= 'a' && c <= 'f') return c - 'a' + 10;
	if (c >= 'A' && c <= 'F') return c - 'A' + 10;
	return -1;
}

/* 1 for the bytes a JSON string holds as they are: ASCII from 0x20 up but
 * '"' and '\\' (the reader's and the writer's fast paths). */
static const unsigned char wasmcp__plain[256] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
};

/* The rest of a string from its first byte that is not plain: out of line,
 * so that the loop over a plain string stays small (the instrumentation
 * charges a loop its whole body on every iteration). */
__attribute__((noinline)) static int wasmcp__string_rest(wasmcp__parser *p) {
	const unsigned char *s = (const unsigned char *)p->s;
	size_t len = p->len;
	while (p->pos < len) {
		size_t i = p->pos;
		while (i < len && wasmcp__plain[s[i]]) i++;
		p->pos = i;
		if (i >= len) break;
		unsigned char c = s[i];
		if (c == '"') {
			p->pos++;
			return 0;
		}
		if (c < 0x20) return -1;
		if (c == '\\') {
			if (++p->pos >= len) return -1;
			char e = (char)s[p->pos];
			if (e == 'u') {
				if (p->pos + 4 >= len) return -1;
				for (int k = 1; k <= 4; k++)
					if (wasmcp__hex((char)s[p->pos + k]) < 0) return -1;
				p->pos += 5;
				continue;
			}
			if (!strchr("\"\\/bfnrt", e) || e == 0) return -1;
			p->pos++;
			continue;
		}
		/* multi-byte UTF-8 */
		int n;
		uint32_t cp;
		if ((c & 0xE0) == 0xC0) n = 1, cp = c & 0x1F;
		else if ((c & 0xF0) == 0xE0) n = 2, cp = c & 0x0F;
		else if ((c & 0xF8) == 0xF0) n = 3, cp = c & 0x07;
		else return -1;
		if (p->pos + n >= p->len) return -1;
		for (int k = 1; k <= n; k++) {
			unsigned char cc = (unsigned char)p->s[p->pos + k];
			if ((cc & 0xC0) != 0x80) return -1;
			cp = (cp << 6) | (cc & 0x3F);
		}
		if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
		    cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
			return -1;
		p->pos += (size_t)n + 1;
	}
	return -1;
}

/* Validates a string starting at the opening quote; UTF-8 is checked. */
static int wasmcp__skip_string(wasmcp__parser *p) {
	const unsigned char *s = (const unsigned char *)p->s;
	size_t i = p->pos + 1, len = p->len;
	while (i < len && wasmcp__plain[s[i]]) i++;
	p->pos = i;
	if (i < len && s[i] == '"') {
		p->pos++;
		return 0;
	}
	return wasmcp__string_rest(p);
}

static int wasmcp__skip_number(wasmcp__parser *p) {
	size_t i = p->pos;
	if (i < p->len && p->s[i] == '-') i++;
	if (i >= p->len) return -1;
	if (p->s[i] == '0') i++;
	else if (p->s[i] >= '1' && p->s[i] <= '9')
		while (i < p->len && p->s[i] >= '0' && p->s[i] <= '9') i++;
	else return -1;
	if (i < p->len && p->s[i] == '.') {
		i++;
		if (i >= p->len || p->s[i] < '0' || p->s[i] > '9') return -1;
		while (i < p->len && p->s[i] >= '0' && p->s[i] <= '9') i++;
	}
	if (i < p->len && (p->s[i] == 'e' || p->s[i] == 'E')) {
		i++;
		if (i < p->len && (p->s[i] == '+' || p->s[i] == '-')) i++;
		if (i >= p->len || p->s[i] < '0' || p->s[i] > '9') return -1;
		while (i < p->len && p->s[i] >= '0' && p->s[i] <= '9') i++;
	}
	p->pos = i;
	return 0;
}

static int wasmcp__value(wasmcp__parser *p, int depth);

/* Doubles the node array: out of line, since it is rare and a call is
 * charged its callee's whole body. */
__attribute__((noinline)) static void wasmcp__grow(wasmcp__parser *p) {
	/* p->n < len: the node being added starts at a byte before the end. */
	size_t cap = (size_t)p->cap * 2;
	if (cap > p->len) cap = p->len;
	void *grown = cap <= SIZE_MAX / sizeof(wasmcp_json_node)
		? wasmcp__arena_resize(p->nodes, (size_t)p->cap * sizeof(wasmcp_json_node), cap * sizeof(wasmcp_json_node)) : NULL;
	if (grown) {
		p->nodes = (wasmcp_json_node *)grown;
		p->cap = (uint32_t)cap;
	} else {
		p->oom = 1;
	}
}

static uint32_t wasmcp__node(wasmcp__parser *p, uint8_t type) {
	uint32_t k = p->n++;
	if (k == p->cap && !p->oom) wasmcp__grow(p);
	if (!p->oom) {
		p->nodes[k].type = type;
		p->nodes[k].start = (uint32_t)p->pos;
		p->nodes[k].count = 0;
		p->nodes[k].skip = 1;
	}
	return k;
}

static void wasmcp__close(wasmcp__parser *p, uint32_t k, uint32_t count) {
	if (!p->oom) {
		p->nodes[k].end = (uint32_t)p->pos;
		p->nodes[k].skip = p->n - k;
		p->nodes[k].count = count;
	}
}

static int wasmcp__literal(wasmcp__parser *p, const char *lit, uint8_t type) {
	size_t n = strlen(lit);
	if (p->len - p->pos < n || memcmp(p->s + p->pos, lit, n) != 0) return -1;
	uint32_t k = wasmcp__node(p, type);
	p->pos += n;
	wasmcp__close(p, k, 0);
	return 0;
}

static int wasmcp__value(wasmcp__parser *p, int depth) {
	wasmcp__ws(p);
	if (p->pos >= p->len) return -1;
	char c = p->s[p->pos];
	uint32_t k;
	switch (c) {
	case '{':
	case '[': {
		/* An object's members and an array's elements are read alike,
		 * but for the key and ':' before each member. */
		int obj = c == '{';
		char end = obj ? '}' : ']';
		if (depth >= WASMCP_JSON_MAX_DEPTH) return -1;
		k = wasmcp__node(p, obj ? WASMCP_JSON_OBJECT : WASMCP_JSON_ARRAY);
		p->pos++;
		uint32_t count = 0;
		wasmcp__ws(p);
		if (p->pos < p->len && p->s[p->pos] == end) {
			p->pos++;
			wasmcp__close(p, k, 0);
			return 0;
		}
		for (;;) {
			if (obj) {
				wasmcp__ws(p);
				if (p->pos >= p->len || p->s[p->pos] != '"') return -1;
				uint32_t kk = wasmcp__node(p, WASMCP_JSON_STRING);
				if (wasmcp__skip_string(p)) return -1;
				wasmcp__close(p, kk, 0);
				wasmcp__ws(p);
				if (p->pos >= p->len || p->s[p->pos] != ':') return -1;
				p->pos++;
			}
			if (wasmcp__value(p, depth + 1)) return -1;
			count++;
			wasmcp__ws(p);
			if (p->pos >= p->len) return -1;
			if (p->s[p->pos] == ',') {
				p->pos++;
				continue;
			}
			if (p->s[p->pos] == end) {
				p->pos++;
				break;
			}
			return -1;
		}
		wasmcp__close(p, k, count);
		return 0;
	}
	case '"':
		k = wasmcp__node(p, WASMCP_JSON_STRING);
		if (wasmcp__skip_string(p)) return -1;
		wasmcp__close(p, k, 0);
		return 0;
	case 't': return wasmcp__literal(p, "true", WASMCP_JSON_TRUE);
	case 'f': return wasmcp__literal(p, "false", WASMCP_JSON_FALSE);
	case 'n': return wasmcp__literal(p, "null", WASMCP_JSON_NULL);
	default:
		k = wasmcp__node(p, WASMCP_JSON_NUMBER);
		if (wasmcp__skip_number(p)) return -1;
		wasmcp__close(p, k, 0);
		return 0;
	}
}

int wasmcp_json_parse(const char *src, size_t len, wasmcp_json_doc *doc) {
	memset(doc, 0, sizeof *doc);
	if (!src || len > UINT32_MAX - 1) return -1;
	/* A guess of one node per 8 bytes, doubled as needed; a document over
	 * WASMCP__ONE_PASS bytes is counted first instead (a pass with no
	 * array) and gets an array of exactly its nodes, as does one whose
	 * guess or doubling did not fit. */
	uint32_t cap = (uint32_t)(len / 8 + 8 < len ? len / 8 + 8 : len);
	wasmcp_json_node *nodes = len <= WASMCP__ONE_PASS
		? (wasmcp_json_node *)wasmcp_alloc((size_t)cap * sizeof(wasmcp_json_node)) : NULL;
	wasmcp__parser p = {src, len, 0, nodes, 0, nodes ? cap : 0, !nodes};
	if (wasmcp__value(&p, 0)) return -1;
	wasmcp__ws(&p);
	if (p.pos != len) return -1;
	if (p.oom) {
		/* The pass counted the nodes all the same. */
		if (nodes) wasmcp__arena_pop(p.nodes);
		if ((size_t)p.n > SIZE_MAX / sizeof(wasmcp_json_node)) return -1;
		nodes = (wasmcp_json_node *)wasmcp_alloc((size_t)p.n * sizeof(wasmcp_json_node));
		if (!nodes) return -1;
		wasmcp__parser q = {src, len, 0, nodes, 0, p.n, 0};
		if (wasmcp__value(&q, 0) || q.n != p.n) return -1;
		p.nodes = nodes;
	} else if (p.cap - p.n > 1024) {
		/* Give back what a doubling left unused. */
		void *shrunk = wasmcp__arena_resize(p.nodes, (size_t)p.cap * sizeof(wasmcp_json_node), (size_t)p.n * sizeof(wasmcp_json_node));
		if (shrunk) p.nodes = (wasmcp_json_node *)shrunk;
	}
	doc->src = src;
	doc->len = len;
	doc->nodes = p.nodes;
	doc->n = p.n;
	return 0;
}

wasmcp_json wasmcp_json_root(const wasmcp_json_doc *doc) {
	wasmcp_json v = {doc, (doc && doc->n) ? 0 : -1};
	return v;
}

static const wasmcp_json_node *wasmcp__n(wasmcp_json v) {
	if (!v.doc || v.i < 0 || (uint32_t)v.i >= v.doc->n) return NULL;
	return &v.doc->nodes[v.i];
}

int wasmcp_json_type(wasmcp_json v) {
	const wasmcp_json_node *n = wasmcp__n(v);
	return n ? n->type : WASMCP_JSON_MISSING;
}

int wasmcp_json_is_missing(wasmcp_json v) { return wasmcp__n(v) == NULL; }

size_t wasmcp_json_len(wasmcp_json v) {
	const wasmcp_json_node *n = wasmcp__n(v);
	if (!n || (n->type != WASMCP_JSON_ARRAY && n->type != WASMCP_JSON_OBJECT)) return 0;
	return n->count;
}

int wasmcp_json_next(wasmcp_json obj, uint32_t *it, wasmcp_json *key, wasmcp_json *val) {
	const wasmcp_json_node *n = wasmcp__n(obj);
	if (!n || n->type != WASMCP_JSON_OBJECT) return 0;
	/* *it is the node index of the next key, relative to obj (0 = first). */
	uint32_t k = *it ? *it : (uint32_t)obj.i + 1;
	if (k >= (uint32_t)obj.i + n->skip) return 0;
	key->doc = val->doc = obj.doc;
	key->i = (int32_t)k;
	val->i = (int32_t)(k + 1);
	*it = k + 1 + obj.doc->nodes[k + 1].skip;
	return 1;
}

wasmcp_json wasmcp_json_at(wasmcp_json arr, size_t idx) {
	const wasmcp_json_node *n = wasmcp__n(arr);
	if (!n || n->type != WASMCP_JSON_ARRAY || idx >= n->count) return wasmcp_json_missing;
	uint32_t k = (uint32_t)arr.i + 1;
	for (size_t j = 0; j < idx; j++) k += arr.doc->nodes[k].skip;
	wasmcp_json v = {arr.doc, (int32_t)k};
	return v;
}

static size_t wasmcp__utf8(uint32_t cp, char *o) {
	if (cp < 0x80) { o[0] = (char)cp; return 1; }
	if (cp < 0x800) { o[0] = (char)(0xC0 | (cp >> 6)); o[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
	if (cp < 0x10000) {
		o[0] = (char)(0xE0 | (cp >> 12)); o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		o[2] = (char)(0x80 | (cp & 0x3F)); return 3;
	}
	o[0] = (char)(0xF0 | (cp >> 18)); o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

/* Decodes the validated string s[0:n] (without quotes) into out, which has
 * room for n bytes (decoding never grows). Returns the decoded length. */
static size_t wasmcp__unescape(const char *s, size_t n, char *out) {
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		char c = s[i];
		if (c != '\\') { out[o++] = c; i++; continue; }
		char e = s[i + 1];
		i += 2;
		switch (e) {
		case 'b': out[o++] = '\b'; break;
		case 'f': out[o++] = '\f'; break;
		case 'n': out[o++] = '\n'; break;
		case 'r': out[o++] = '\r'; break;
		case 't': out[o++] = '\t'; break;
		case 'u': {
			uint32_t cp = 0;
			for (int k = 0; k < 4; k++) cp = cp << 4 | (uint32_t)wasmcp__hex(s[i + k]);
			i += 4;
			if (cp >= 0xD800 && cp <= 0xDBFF && i + 6 <= n && s[i] == '\\' && s[i + 1] == 'u') {
				uint32_t lo = 0;
				int ok = 1;
				for (int k = 0; k < 4; k++) {
					int h = wasmcp__hex(s[i + 2 + k]);
					if (h < 0) ok = 0;
					lo = lo << 4 | (uint32_t)(h < 0 ? 0 : h);
				}
				if (ok && lo >= 0xDC00 && lo <= 0xDFFF) {
					cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
					i += 6;
				}
			}
			if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD; /* lone surrogate */
			o += wasmcp__utf8(cp, out + o);
			break;
		}
		default: out[o++] = e; break; /* " \ / */
		}
	}
	return o;
}

const char *wasmcp_json_str(wasmcp_json v, size_t *len) {
	const wasmcp_json_node *n = wasmcp__n(v);
	if (!n || n->type != WASMCP_JSON_STRING) return NULL;
	const char *s = v.doc->src + n->start + 1;
	size_t raw = n->end - n->start - 2;
	char *out = (char *)wasmcp_alloc(raw + 1);
	if (!out) return NULL;
	size_t o = wasmcp__unescape(s, raw, out);
	out[o] = 0;
	if (len) *len = o;
	return out;
}

/* wasmcp_json_eq with strlen(str) known. Decoding escapes only shortens a
 * string, so a raw text shorter than str never matches, and one of the
 * same length only when it is str byte for byte and has no escape. */
static int wasmcp__eqn(wasmcp_json v, const char *str, size_t len) {
	const wasmcp_json_node *n = wasmcp__n(v);
	if (!n || n->type != WASMCP_JSON_STRING) return 0;
	const char *s = v.doc->src + n->start + 1;
	size_t raw = n->end - n->start - 2;
	if (raw < len) return 0;
	if (raw == len) {
		/* Keys are short: a loop here, not calls to memcmp and memchr. */
		for (size_t k = 0; k < len; k++)
			if (s[k] != str[k] || s[k] == '\\') return 0;
		return 1;
	}
	if (!memchr(s, '\\', raw)) return 0;
	size_t dn;
	const char *d = wasmcp_json_str(v, &dn);
	return d && dn == len && memcmp(d, str, len) == 0;
}

int wasmcp_json_eq(wasmcp_json v, const char *str) { return str && wasmcp__eqn(v, str, strlen(str)); }

/* wasmcp_json_get with strlen(key) known; WASMCP__GET takes a literal. */
static wasmcp_json wasmcp__getn(wasmcp_json obj, const char *key, size_t len) {
	wasmcp_json k, val, found = wasmcp_json_missing;
	uint32_t it = 0;
	while (wasmcp_json_next(obj, &it, &k, &val))
		if (wasmcp__eqn(k, key, len)) found = val;
	return found;
}
#define WASMCP__GET(obj, lit) wasmcp__getn((obj), lit, sizeof lit - 1)

wasmcp_json wasmcp_json_get(wasmcp_json obj, const char *key) {
	return key ? wasmcp__getn(obj, key, strlen(key)) : wasmcp_json_missing;
}

int wasmcp_json_num(wasmcp_json v, double *out) {
	const wasmcp_json_node *n = wasmcp__n(v);
	if (!n || n->type != WASMCP_JSON_NUMBER) return -1;
	char tmp[64];
	size_t len = n->end - n->start;
	if (len >= sizeof tmp) {
		char *big = wasmcp_strndup(v.doc->src + n->start, len);
		if (!big) return -1;
		*out = strtod(big, NULL);
		return 0;
	}
	memcpy(tmp, v.doc->src + n->start, len);
	tmp[len] = 0;
	*out = strtod(tmp, NULL);
	return 0;
}

int wasmcp_json_int(wasmcp_json v, int64_t *out) {
	double d;
	if (wasmcp_json_num(v, &d)) return -1;
	if (!(d >= -9007199254740992.0 && d <= 9007199254740992.0) || d != floor(d)) return -1;
	*out = (int64_t)d;
	return 0;
}

int wasmcp_json_bool(wasmcp_json v, int *out) {
	int t = wasmcp_json_type(v);
	if (t != WASMCP_JSON_TRUE && t != WASMCP_JSON_FALSE) return -1;
	*out = t == WASMCP_JSON_TRUE;
	return 0;
}

const char *wasmcp_json_raw(wasmcp_json v, size_t *len) {
	const wasmcp_json_node *n = wasmcp__n(v);
	if (!n) return NULL;
	if (len) *len = n->end - n->start;
	return v.doc->src + n->start;
}

/* ---- writer ---- */

void wasmcp_buf_free(wasmcp_buf *b) {
	free(b->p);
	memset(b, 0, sizeof *b);
}

void wasmcp_buf_put(wasmcp_buf *b, const void *s, size_t n) {
	if (b->oom || n == 0) return;
	if (n > SIZE_MAX / 2 - b->len) { b->oom = 1; return; }
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n) cap *= 2;
		char *p = (char *)realloc(b->p, cap);
		if (!p) { b->oom = 1; return; }
		b->p = p;
		b->cap = cap;
	}
	if (n <= 16) {
		/* The writer's punctuation and keys, without a call to memcpy
		 * (the instrumentation charges a call its whole body). */
		const char *c = (const char *)s;
		for (size_t k = 0; k < n; k++) b->p[b->len + k] = c[k];
	} else {
		memcpy(b->p + b->len, s, n);
	}
	b->len += n;
}

static void wasmcp__sep(wasmcp_buf *b) {
	if (b->after_key) { b->after_key = 0; return; }
	if (b->depth > 0) {
		if (!b->first[b->depth]) wasmcp_buf_put(b, ",", 1);
		b->first[b->depth] = 0;
	}
}

static void wasmcp__open(wasmcp_buf *b, char c) {
	wasmcp__sep(b);
	wasmcp_buf_put(b, &c, 1);
	if (b->depth >= WASMCP_JSON_MAX_DEPTH) { b->oom = 1; return; }
	b->first[++b->depth] = 1;
}

static void wasmcp__shut(wasmcp_buf *b, char c) {
	wasmcp_buf_put(b, &c, 1);
	if (b->depth > 0) b->depth--;
	b->after_key = 0;
}

void wasmcp_w_obj(wasmcp_buf *b) { wasmcp__open(b, '{'); }
void wasmcp_w_end_obj(wasmcp_buf *b) { wasmcp__shut(b, '}'); }
void wasmcp_w_arr(wasmcp_buf *b) { wasmcp__open(b, '['); }
void wasmcp_w_end_arr(wasmcp_buf *b) { wasmcp__shut(b, ']'); }

/* Length of the valid UTF-8 sequence at s[i] (1..4), or 0 if invalid. */
static size_t wasmcp__utf8_seq(const char *s, size_t n, size_t i) {
	unsigned char c = (unsigned char)s[i];
	if (c < 0x80) return 1;
	size_t k;
	uint32_t cp;
	if ((c & 0xE0) == 0xC0) k = 1, cp = c & 0x1F;
	else if ((c & 0xF0) == 0xE0) k = 2, cp = c & 0x0F;
	else if ((c & 0xF8) == 0xF0) k = 3, cp = c & 0x07;
	else return 0;
	if (n - i <= k) return 0;
	for (size_t j = 1; j <= k; j++) {
		unsigned char cc = (unsigned char)s[i + j];
		if ((cc & 0xC0) != 0x80) return 0;
		cp = (cp << 6) | (cc & 0x3F);
	}
	if ((k == 1 && cp < 0x80) || (k == 2 && cp < 0x800) || (k == 3 && cp < 0x10000) ||
	    cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return k + 1;
}

int wasmcp_utf8_valid(const char *s, size_t n) {
	for (size_t i = 0; i < n;) {
		size_t k = wasmcp__utf8_seq(s, n, i);
		if (!k) return 0;
		i += k;
	}
	return 1;
}

/* Writes s as a JSON string; invalid UTF-8 bytes become U+FFFD. */
/* wasmcp__quoted from s[i], the first byte that is not plain, on: out of
 * line, as wasmcp__string_rest is. */
__attribute__((noinline)) static void wasmcp__quoted_rest(wasmcp_buf *b, const char *s, size_t n, size_t i) {
	static const char hex[] = "0123456789abcdef";
	size_t run = 0;
	for (; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (wasmcp__plain[c]) continue;
		if (c >= 0x80) {
			size_t k = wasmcp__utf8_seq(s, n, i);
			if (k) { i += k - 1; continue; }
			wasmcp_buf_put(b, s + run, i - run);
			run = i + 1;
			wasmcp_buf_put(b, "\\ufffd", 6);
			continue;
		}
		wasmcp_buf_put(b, s + run, i - run);
		run = i + 1;
		char esc[6] = {'\\', 0, 0, 0, 0, 0};
		size_t en = 2;
		switch (c) {
		case '"': esc[1] = '"'; break;
		case '\\': esc[1] = '\\'; break;
		case '\n': esc[1] = 'n'; break;
		case '\r': esc[1] = 'r'; break;
		case '\t': esc[1] = 't'; break;
		default:
			esc[1] = 'u'; esc[2] = '0'; esc[3] = '0';
			esc[4] = hex[c >> 4]; esc[5] = hex[c & 15];
			en = 6;
		}
		wasmcp_buf_put(b, esc, en);
	}
	wasmcp_buf_put(b, s + run, n - run);
}

static void wasmcp__quoted(wasmcp_buf *b, const char *s, size_t n) {
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;
	while (i < n && wasmcp__plain[u[i]]) i++;
	wasmcp_buf_put(b, "\"", 1);
	if (i == n) wasmcp_buf_put(b, s, n);
	else wasmcp__quoted_rest(b, s, n, i);
	wasmcp_buf_put(b, "\"", 1);
}

void wasmcp_w_key(wasmcp_buf *b, const char *key) {
	wasmcp__sep(b);
	wasmcp__quoted(b, key, strlen(key));
	wasmcp_buf_put(b, ":", 1);
	b->after_key = 1;
}

void wasmcp_w_strn(wasmcp_buf *b, const char *s, size_t n) {
	wasmcp__sep(b);
	wasmcp__quoted(b, s ? s : "", s ? n : 0);
}

void wasmcp_w_str(wasmcp_buf *b, const char *s) { wasmcp_w_strn(b, s, s ? strlen(s) : 0); }

void wasmcp_w_uint(wasmcp_buf *b, uint64_t v) {
	char tmp[24];
	size_t i = sizeof tmp;
	do { tmp[--i] = (char)('0' + v % 10); v /= 10; } while (v);
	wasmcp__sep(b);
	wasmcp_buf_put(b, tmp + i, sizeof tmp - i);
}

void wasmcp_w_int(wasmcp_buf *b, int64_t v) {
	if (v >= 0) { wasmcp_w_uint(b, (uint64_t)v); return; }
	char tmp[24];
	size_t i = sizeof tmp;
	uint64_t u = (uint64_t)0 - (uint64_t)v;
	do { tmp[--i] = (char)('0' + u % 10); u /= 10; } while (u);
	tmp[--i] = '-';
	wasmcp__sep(b);
	wasmcp_buf_put(b, tmp + i, sizeof tmp - i);
}

void wasmcp_w_num(wasmcp_buf *b, double v) {
	if (!isfinite(v)) { wasmcp_w_null(b); return; }
	if (v == floor(v) && fabs(v) < 9007199254740992.0) { wasmcp_w_int(b, (int64_t)v); return; }
	char tmp[40];
	int n = snprintf(tmp, sizeof tmp, "%.15g", v);
	if (strtod(tmp, NULL) != v) n = snprintf(tmp, sizeof tmp, "%.17g", v);
	wasmcp__sep(b);
	wasmcp_buf_put(b, tmp, (size_t)n);
}

void wasmcp_w_bool(wasmcp_buf *b, int v) {
	wasmcp__sep(b);
	if (v) wasmcp_buf_put(b, "true", 4);
	else wasmcp_buf_put(b, "false", 5);
}

void wasmcp_w_null(wasmcp_buf *b) {
	wasmcp__sep(b);
	wasmcp_buf_put(b, "null", 4);
}

void wasmcp_w_raw(wasmcp_buf *b, const char *json, size_t n) {
	wasmcp__sep(b);
	wasmcp_buf_put(b, json, n);
}

static const char wasmcp__b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static size_t wasmcp__b64enc(const unsigned char *d, size_t n, char *o) {
	size_t j = 0, i = 0;
	for (; i + 2 < n; i += 3) {
		uint32_t v = (uint32_t)d[i] << 16 | (uint32_t)d[i + 1] << 8 | d[i + 2];
		o[j++] = wasmcp__b64[v >> 18]; o[j++] = wasmcp__b64[(v >> 12) & 63];
		o[j++] = wasmcp__b64[(v >> 6) & 63]; o[j++] = wasmcp__b64[v & 63];
	}
	if (i < n) {
		uint32_t v = (uint32_t)d[i] << 16 | (i + 1 < n ? (uint32_t)d[i + 1] << 8 : 0);
		o[j++] = wasmcp__b64[v >> 18]; o[j++] = wasmcp__b64[(v >> 12) & 63];
		o[j++] = i + 1 < n ? wasmcp__b64[(v >> 6) & 63] : '=';
		o[j++] = '=';
	}
	return j;
}

char *wasmcp_base64_encode(const void *data, size_t n, size_t *out_len) {
	if (n > (SIZE_MAX / 4) * 3 - 3) return NULL;
	size_t m = (n + 2) / 3 * 4;
	char *o = (char *)wasmcp_alloc(m + 1);
	if (!o) return NULL;
	wasmcp__b64enc((const unsigned char *)data, n, o);
	o[m] = 0;
	if (out_len) *out_len = m;
	return o;
}

void wasmcp_w_base64(wasmcp_buf *b, const void *data, size_t n) {
	wasmcp__sep(b);
	wasmcp_buf_put(b, "\"", 1);
	const unsigned char *d = (const unsigned char *)data;
	char chunk[4 * 256];
	while (n > 0) { /* 768 input bytes per chunk, a multiple of 3 */
		size_t take = n > 768 ? 768 : n;
		wasmcp_buf_put(b, chunk, wasmcp__b64enc(d, take, chunk));
		d += take;
		n -= take;
	}
	wasmcp_buf_put(b, "\"", 1);
}

static int wasmcp__b64val(char c) {
	if (c >= 'A' && c <= 'Z') return c - 'A';
	if (c >= 'a' && c <= 'z') return c - 'a' + 26;
	if (c >= '0' && c <= '9') return c - '0' + 52;
	if (c == '+' || c == '-') return 62;
	if (c == '/' || c == '_') return 63;
	return -1;
}

unsigned char *wasmcp_base64_decode(const char *s, size_t n, size_t *out_len) {
	while (n > 0 && s[n - 1] == '=') n--;
	if (n % 4 == 1) return NULL;
	unsigned char *o = (unsigned char *)wasmcp_alloc(n / 4 * 3 + 3);
	if (!o) return NULL;
	size_t j = 0;
	uint32_t acc = 0;
	int bits = 0;
	for (size_t i = 0; i < n; i++) {
		int v = wasmcp__b64val(s[i]);
		if (v < 0) return NULL;
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			o[j++] = (unsigned char)(acc >> bits);
		}
	}
	/* leftover bits must be zero (canonical encoding) */
	if (bits > 0 && (acc & ((1u << bits) - 1))) return NULL;
	if (out_len) *out_len = j;
	o[j] = 0;
	return o;
}

#endif /* WASMCP_IMPLEMENTATION */
