/* Native tests of wasmcp_json.h (built by sdk/sdktest with ASan and UBSan):
 * conformance tables, accessors on missing values, writer round trips and a
 * deterministic mutation fuzz loop. Exit status 0 and "PASS" on success. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every allocation, the SDK's and the test's, is counted against budget
 * (no limit but while a test sets one), so that the SDK's out-of-memory
 * paths run here under ASan: a guest's linear memory is bounded. */
static size_t budget = (size_t)-1, live;
typedef union {
	size_t n;
	max_align_t align;
} budget_head;
static void *budget_realloc(void *p, size_t n) {
	size_t old = p ? ((budget_head *)p - 1)->n : 0;
	if (n > budget || live - old > budget - n) return NULL;
	budget_head *h = (budget_head *)realloc(p ? (budget_head *)p - 1 : NULL, sizeof *h + n);
	if (!h) return NULL;
	live = live - old + n;
	h->n = n;
	return h + 1;
}
static void *budget_malloc(size_t n) { return budget_realloc(NULL, n); }
static void budget_free(void *p) {
	if (!p) return;
	live -= ((budget_head *)p - 1)->n;
	free((budget_head *)p - 1);
}
#define malloc budget_malloc
#define realloc budget_realloc
#define free budget_free

#define WASMCP_IMPLEMENTATION
#include "../wasmcp_json.h"

static int failures;
#define CHECK(cond, ...)                                      \
	do {                                                      \
		if (!(cond)) {                                        \
			failures++;                                       \
			fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);   \
			fprintf(stderr, __VA_ARGS__);                     \
			fputc('\n', stderr);                              \
		}                                                     \
	} while (0)

static int parses(const char *s) {
	wasmcp_json_doc d;
	int ok = wasmcp_json_parse(s, strlen(s), &d) == 0;
	wasmcp_arena_reset();
	return ok;
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next(void) {
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Walks every value of a document through every accessor. */
static void walk(wasmcp_json v, int depth) {
	size_t n;
	double d;
	int64_t i;
	int b;
	wasmcp_json_str(v, &n);
	wasmcp_json_num(v, &d);
	wasmcp_json_int(v, &i);
	wasmcp_json_bool(v, &b);
	wasmcp_json_raw(v, &n);
	wasmcp_json_get(v, "a");
	if (depth > 80) return;
	wasmcp_json k, val;
	uint32_t it = 0;
	while (wasmcp_json_next(v, &it, &k, &val)) {
		walk(k, depth + 1);
		walk(val, depth + 1);
	}
	for (size_t j = 0; j < wasmcp_json_len(v) && wasmcp_json_type(v) == WASMCP_JSON_ARRAY; j++)
		walk(wasmcp_json_at(v, j), depth + 1);
}

int main(void) {
	static const char *good[] = {
		"0", "-0", "1.5e-7", "-12.25E+3", "true", "false", "null", "\"\"", "\"\\u00e9\\ud83d\\ude00\"",
		"[]", "{}", " [1, [2, [3]], {\"a\": {\"b\": null}}] ", "{\"a\":1,\"a\":2}", "\"h\xc3\xa9\"",
		"\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"",
	};
	static const char *bad[] = {
		"", " ", "01", "1.", ".5", "1e", "-", "+1", "[1,]", "[,1]", "{\"a\"}", "{\"a\":}", "{a:1}", "{\"a\":1,}",
		"\"\x01\"", "\"\\x\"", "\"\\u12\"", "\"abc", "tru", "nul", "[1 2]", "{} {}", "\"\xc3\"", "\"\xed\xa0\x80\"",
		"\"\xc0\xaf\"", "\"\xf5\x80\x80\x80\"", "[\"\\u00\"]",
	};
	for (size_t i = 0; i < sizeof good / sizeof *good; i++) CHECK(parses(good[i]), "should parse: %s", good[i]);
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) CHECK(!parses(bad[i]), "should not parse: %s", bad[i]);

	/* nesting limit */
	char deep[2 * (WASMCP_JSON_MAX_DEPTH + 2) + 1];
	for (int k = 0; k <= WASMCP_JSON_MAX_DEPTH; k++) deep[k] = '[', deep[2 * (WASMCP_JSON_MAX_DEPTH + 1) - 1 - k] = ']';
	deep[2 * (WASMCP_JSON_MAX_DEPTH + 1)] = 0;
	CHECK(!parses(deep), "depth %d should be refused", WASMCP_JSON_MAX_DEPTH + 1);

	/* accessors */
	const char *src = "{\"s\":\"x\\u0000y\",\"n\":-2.5,\"i\":9007199254740992,\"b\":true,\"a\":[1,{\"k\":\"v\"}],\"e\\u0301\":1}";
	wasmcp_json_doc d;
	CHECK(wasmcp_json_parse(src, strlen(src), &d) == 0, "parse");
	wasmcp_json r = wasmcp_json_root(&d);
	size_t n;
	const char *s = wasmcp_json_str(wasmcp_json_get(r, "s"), &n);
	CHECK(s && n == 3 && s[1] == 0 && s[2] == 'y', "string with NUL");
	double dv;
	int64_t iv;
	int bv;
	CHECK(wasmcp_json_num(wasmcp_json_get(r, "n"), &dv) == 0 && dv == -2.5, "num");
	CHECK(wasmcp_json_int(wasmcp_json_get(r, "n"), &iv) != 0, "non-integer int");
	CHECK(wasmcp_json_int(wasmcp_json_get(r, "i"), &iv) == 0 && iv == 9007199254740992LL, "int");
	CHECK(wasmcp_json_bool(wasmcp_json_get(r, "b"), &bv) == 0 && bv == 1, "bool");
	CHECK(wasmcp_json_eq(wasmcp_json_get(wasmcp_json_at(wasmcp_json_get(r, "a"), 1), "k"), "v"), "nested");
	CHECK(wasmcp_json_type(wasmcp_json_get(r, "e\xcc\x81")) == WASMCP_JSON_NUMBER, "escaped key");
	wasmcp_json miss = wasmcp_json_get(wasmcp_json_get(r, "nope"), "deeper");
	CHECK(wasmcp_json_is_missing(miss) && !wasmcp_json_str(miss, NULL) && wasmcp_json_len(miss) == 0, "missing");
	CHECK(wasmcp_json_is_missing(wasmcp_json_at(wasmcp_json_get(r, "a"), 2)), "index out of range");
	wasmcp_arena_reset();

	/* wasmcp_json_eq compares the decoded string: an escape shortens it, so
	 * a raw text of the key's length with a backslash never matches */
	static const struct {
		const char *json, *key;
		int want;
	} eqs[] = {
		{"\"ab\"", "ab", 1}, {"\"ab\"", "a", 0}, {"\"ab\"", "abc", 0}, {"\"\"", "", 1},
		{"\"a\\u0062\"", "ab", 1}, {"\"a\\nb\"", "a\nb", 1}, {"\"a\\nb\"", "a\\nb", 0},
		{"\"a\\\\b\"", "a\\b", 1}, {"\"a\\\\b\"", "a\\\\b", 0}, {"\"\\u00e9\"", "\xc3\xa9", 1}, {"1", "1", 0},
	};
	for (size_t i = 0; i < sizeof eqs / sizeof *eqs; i++) {
		CHECK(wasmcp_json_parse(eqs[i].json, strlen(eqs[i].json), &d) == 0, "parse %s", eqs[i].json);
		CHECK(wasmcp_json_eq(wasmcp_json_root(&d), eqs[i].key) == eqs[i].want, "eq(%s, \"%s\") != %d", eqs[i].json, eqs[i].key, eqs[i].want);
		wasmcp_arena_reset();
	}

	/* the node array grows in one pass (from len/8 + 8 nodes up to one per
	 * byte) and shrinks after a large overshoot; earlier documents and
	 * arena allocations stay valid around it */
	static const size_t sizes[] = {1, 2, 7, 8, 9, 10, 30, 64, 255, 1000, 5000, 70000};
	for (size_t t = 0; t < sizeof sizes / sizeof *sizes; t++) {
		size_t k = sizes[t];
		wasmcp_json_doc first;
		CHECK(wasmcp_json_parse(src, strlen(src), &first) == 0, "parse before growth");
		char *keep = wasmcp_strndup("kept", 4);
		/* k elements alternate 7 and [] : 2 to 3 bytes a node */
		wasmcp_buf b = {0};
		wasmcp_w_arr(&b);
		for (size_t j = 0; j < k; j++) {
			if (j % 2) wasmcp_w_raw(&b, "[]", 2);
			else wasmcp_w_int(&b, 7);
		}
		wasmcp_w_end_arr(&b);
		wasmcp_json_doc big;
		CHECK(!b.oom && wasmcp_json_parse(b.p, b.len, &big) == 0, "array of %zu", k);
		wasmcp_json arr = wasmcp_json_root(&big);
		CHECK(big.n == k + 1 && wasmcp_json_len(arr) == k, "array of %zu: %u nodes", k, big.n);
		CHECK(wasmcp_json_int(wasmcp_json_at(arr, k - 1 - (k - 1) % 2), &iv) == 0 && iv == 7, "array of %zu: last 7", k);
		CHECK(k < 2 || wasmcp_json_type(wasmcp_json_at(arr, 1)) == WASMCP_JSON_ARRAY, "array of %zu: []", k);
		CHECK(strcmp(keep, "kept") == 0, "arena allocation before the parse");
		CHECK(wasmcp_json_eq(wasmcp_json_get(wasmcp_json_at(wasmcp_json_get(wasmcp_json_root(&first), "a"), 1), "k"), "v"),
		      "document before the parse");
		wasmcp_buf_free(&b);
		wasmcp_arena_reset();
	}

#ifdef WASMCP__ASAN
	/* under ASan the arena's static buffer is poisoned but for what its
	 * allocations hold (each gets a byte more, for a NUL), and all of it
	 * after the reset */
	wasmcp_arena_reset();
	char *a5 = wasmcp_alloc(5), *a3 = wasmcp_alloc(3);
	CHECK(a5 && a3 && !__asan_address_is_poisoned(a5 + 5) && __asan_address_is_poisoned(a5 + 6) &&
	          __asan_address_is_poisoned(a3 - 1) && !__asan_address_is_poisoned(a3 + 3) && __asan_address_is_poisoned(a3 + 4),
	      "the arena's buffer is poisoned between allocations");
	wasmcp_arena_reset();
	CHECK(__asan_address_is_poisoned(a5) && __asan_address_is_poisoned(a3), "the arena's buffer is poisoned after the reset");
#endif

	/* a document parses in the memory its exact node array needs: a large
	 * one is counted first, and a small one whose guess (a node per 8
	 * bytes) or doubling does not fit is filled in again */
	static const struct {
		const char *head, *unit, *tail;
		size_t units, nodes;
	} fits[] = {
		{"\"", "a", "\"", 1 << 20, 1},
		{"[", "1,", "1]", 150000, 150002},
		{"{\"k\":[", "{\"a\":[]},", "7]}", 30000, 90004},
		{"\"", "a", "\"", 60000, 1},
		{"[", "1,", "1]", 30000, 30002},
	};
	for (size_t t = 0; t < sizeof fits / sizeof *fits; t++) {
		size_t hn = strlen(fits[t].head), un = strlen(fits[t].unit), tn = strlen(fits[t].tail);
		size_t len = hn + un * fits[t].units + tn;
		char *doc = malloc(len);
		CHECK(doc != NULL, "document %zu", t);
		if (!doc) continue;
		memcpy(doc, fits[t].head, hn);
		for (size_t j = 0; j < fits[t].units; j++) memcpy(doc + hn + j * un, fits[t].unit, un);
		memcpy(doc + hn + un * fits[t].units, fits[t].tail, tn);
		/* the nodes, a block header and the NUL byte the arena adds */
		budget = live + fits[t].nodes * sizeof(wasmcp_json_node) + 64;
		wasmcp_json_doc big;
		int r = wasmcp_json_parse(doc, len, &big);
		budget = (size_t)-1;
		CHECK(r == 0 && big.n == fits[t].nodes, "document %zu in its budget: %d, %u nodes", t, r, big.n);
		if (r == 0) {
			const wasmcp_json_node *root = &big.nodes[0], *last = &big.nodes[big.n - 1];
			CHECK(root->start == 0 && root->end == len && root->skip == big.n && last->end == len - tn + 1,
			      "document %zu: the nodes span it", t);
		}
		wasmcp_arena_reset();
		budget = live + fits[t].nodes * sizeof(wasmcp_json_node) / 2;
		CHECK(fits[t].nodes * sizeof(wasmcp_json_node) <= WASMCP__BUMP || wasmcp_json_parse(doc, len, &big) != 0,
		      "document %zu in half its budget", t);
		budget = (size_t)-1;
		wasmcp_arena_reset();
		free(doc);
	}

	/* writer: every byte string comes back as valid JSON */
	for (int round = 0; round < 2000; round++) {
		char raw[64];
		size_t len = next() % sizeof raw;
		for (size_t k = 0; k < len; k++) raw[k] = (char)next();
		wasmcp_buf b = {0};
		wasmcp_w_obj(&b);
		wasmcp_w_key(&b, "k");
		wasmcp_w_strn(&b, raw, len);
		wasmcp_w_key(&b, "n");
		wasmcp_w_num(&b, (double)(int64_t)next() / 3.0);
		wasmcp_w_key(&b, "b");
		wasmcp_w_base64(&b, raw, len);
		wasmcp_w_end_obj(&b);
		CHECK(!b.oom && wasmcp_json_parse(b.p, b.len, &d) == 0, "writer output does not parse: %.*s", (int)b.len, b.p);
		if (wasmcp_utf8_valid(raw, len)) {
			const char *back = wasmcp_json_str(wasmcp_json_get(wasmcp_json_root(&d), "k"), &n);
			CHECK(back && n == len && memcmp(back, raw, len) == 0, "string round trip");
		}
		size_t bn;
		const char *b64 = wasmcp_json_str(wasmcp_json_get(wasmcp_json_root(&d), "b"), &bn);
		unsigned char *dec = b64 ? wasmcp_base64_decode(b64, bn, &n) : NULL;
		CHECK(dec && n == len && memcmp(dec, raw, len) == 0, "base64 round trip");
		wasmcp_buf_free(&b);
		wasmcp_arena_reset();
	}

	/* mutation fuzz: no crash, no out-of-bounds read (ASan), walkable */
	static const char *seeds[] = {
		"{\"method\":\"tools/call\",\"params\":{\"name\":\"x\",\"arguments\":{\"a\":[1,2.5e3,\"\\u00e9\",true,null]}}}",
		"[[[[\"\\ud83d\\ude00\"]]],{\"k\":{\"k\":{\"k\":-0.0e-0}}}]",
	};
	char buf[256];
	for (int round = 0; round < 300000; round++) {
		const char *seed = seeds[next() % 2];
		size_t len = strlen(seed);
		memcpy(buf, seed, len);
		int edits = 1 + (int)(next() % 4);
		for (int e = 0; e < edits; e++) {
			size_t at = len ? next() % len : 0;
			switch (next() % 3) {
			case 0: buf[at] = (char)next(); break;                              /* replace */
			case 1: if (len) { memmove(buf + at, buf + at + 1, len - at - 1); len--; } break; /* delete */
			default:
				if (len < sizeof buf - 1) {
					memmove(buf + at + 1, buf + at, len - at);
					static const char alphabet[] = "{}[]\",:\\0123456789.eE-+tfnu \x80\xc3";
					buf[at] = alphabet[next() % (sizeof alphabet - 1)];
					len++;
				}
			}
		}
		/* parse an exact-size heap copy so ASan sees reads past the end */
		char *copy = malloc(len ? len : 1);
		memcpy(copy, buf, len);
		if (wasmcp_json_parse(copy, len, &d) == 0) walk(wasmcp_json_root(&d), 0);
		free(copy);
		wasmcp_arena_reset();
	}

	if (failures) {
		printf("FAIL: %d checks failed\n", failures);
		return 1;
	}
	printf("PASS\n");
	return 0;
}
