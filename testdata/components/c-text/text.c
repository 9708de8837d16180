// A component's core module in C, with the canonical ABI written by hand
// (no bindings generator): see world.wit for the interface. Built into
// c-text.wasm by ../build.sh (clang, then jco-transpile's componentEmbed
// and componentNew with the WASI preview 1 reactor adapter).
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../cabi.h"

// drop frees an argument's bytes: the host allocated them with
// cabi_realloc, except for an empty one, which may point anywhere.
static void drop(void *p, size_t n) {
	if (n)
		free(p);
}

// A string result: pointer and length, in a return area.
static uint32_t ret[3];

static uint32_t *string_result(char *s, size_t n) {
	ret[0] = (uint32_t)(uintptr_t)s;
	ret[1] = (uint32_t)n;
	return ret;
}

EXPORT("greet")
uint32_t *greet(char *name, size_t len) {
	static const char hello[] = "Hello, ";
	size_t n = sizeof hello - 1 + len + 1;
	char *out = malloc(n);
	memcpy(out, hello, sizeof hello - 1);
	memcpy(out + sizeof hello - 1, name, len);
	out[n - 1] = '!';
	drop(name, len);
	return string_result(out, n);
}

EXPORT("cabi_post_greet")
void greet_post(uint32_t *r) { free((void *)(uintptr_t)r[0]); }

EXPORT("add")
int32_t add(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }

EXPORT("env")
uint32_t *env(char *key, size_t len) {
	char *k = malloc(len + 1);
	memcpy(k, key, len);
	k[len] = 0;
	drop(key, len);
	const char *v = getenv(k);
	free(k);
	// option<string>: discriminant at 0, the string at 4.
	ret[0] = v != NULL;
	if (v) {
		size_t n = strlen(v);
		char *copy = malloc(n ? n : 1);
		memcpy(copy, v, n);
		ret[1] = (uint32_t)(uintptr_t)copy;
		ret[2] = (uint32_t)n;
	}
	return ret;
}

EXPORT("cabi_post_env")
void env_post(uint32_t *r) {
	if (r[0])
		free((void *)(uintptr_t)r[1]);
}

EXPORT("wasmcp:c-text/text@0.1.0#count")
uint32_t *count(char *s, size_t len) {
	uint32_t words = 0;
	int in = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == ' ') {
			in = 0;
		} else if (!in) {
			in = 1;
			words++;
		}
	}
	drop(s, len);
	ret[0] = (uint32_t)len;
	ret[1] = words;
	return ret;
}

EXPORT("wasmcp:c-text/text@0.1.0#upper")
uint32_t *upper(char *s, size_t len) {
	// result<string, string>: discriminant at 0 (0 ok, 1 err), the string at 4.
	if (len == 0) {
		static const char msg[] = "empty text";
		char *e = malloc(sizeof msg - 1);
		memcpy(e, msg, sizeof msg - 1);
		drop(s, len);
		ret[0] = 1;
		ret[1] = (uint32_t)(uintptr_t)e;
		ret[2] = sizeof msg - 1;
		return ret;
	}
	for (size_t i = 0; i < len; i++)
		s[i] = (char)toupper((unsigned char)s[i]);
	ret[0] = 0;
	ret[1] = (uint32_t)(uintptr_t)s;
	ret[2] = (uint32_t)len;
	return ret;
}

EXPORT("cabi_post_wasmcp:c-text/text@0.1.0#upper")
void upper_post(uint32_t *r) { free((void *)(uintptr_t)r[1]); }
