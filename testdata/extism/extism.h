/* extism.h: the Extism kernel imports (extism:host/env) and a few
 * helpers, for the C test plugin. A small header of our own, not the
 * Extism C PDK. Handles are u64 offsets into the kernel's memory; 0 is
 * null. */
#ifndef WASMCP_TEST_EXTISM_H
#define WASMCP_TEST_EXTISM_H

#include <stddef.h>
#include <stdint.h>

#define EXTISM_IMPORT(name) __attribute__((import_module("extism:host/env"), import_name(name)))
#define EXTISM_EXPORT(name) __attribute__((export_name(name)))

typedef uint64_t extism_handle;

EXTISM_IMPORT("alloc") extism_handle extism_alloc(uint64_t n);
EXTISM_IMPORT("free") void extism_free(extism_handle h);
EXTISM_IMPORT("length") uint64_t extism_length(extism_handle h);
EXTISM_IMPORT("load_u8") uint32_t extism_load_u8(extism_handle h);
EXTISM_IMPORT("load_u64") uint64_t extism_load_u64(extism_handle h);
EXTISM_IMPORT("store_u8") void extism_store_u8(extism_handle h, uint32_t v);
EXTISM_IMPORT("store_u64") void extism_store_u64(extism_handle h, uint64_t v);
EXTISM_IMPORT("input_length") uint64_t extism_input_length(void);
EXTISM_IMPORT("input_load_u8") uint32_t extism_input_load_u8(uint64_t i);
EXTISM_IMPORT("input_load_u64") uint64_t extism_input_load_u64(uint64_t i);
EXTISM_IMPORT("output_set") void extism_output_set(extism_handle h, uint64_t n);
EXTISM_IMPORT("error_set") void extism_error_set(extism_handle h);
EXTISM_IMPORT("log_info") void extism_log_info(extism_handle h);

/* extism_input copies up to max bytes of the input into buf and returns
 * the input's length. */
static inline uint64_t extism_input(uint8_t *buf, uint64_t max) {
	uint64_t n = extism_input_length(), i = 0;
	if (n < max)
		max = n;
	for (; i + 8 <= max; i += 8) {
		uint64_t w = extism_input_load_u64(i);
		__builtin_memcpy(buf + i, &w, 8);
	}
	for (; i < max; i++)
		buf[i] = (uint8_t)extism_input_load_u8(i);
	return n;
}

/* extism_store copies n bytes into a new kernel block. */
static inline extism_handle extism_store(const uint8_t *b, uint64_t n) {
	extism_handle h = extism_alloc(n);
	uint64_t i = 0;
	if (h == 0)
		return 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		__builtin_memcpy(&w, b + i, 8);
		extism_store_u64(h + i, w);
	}
	for (; i < n; i++)
		extism_store_u8(h + i, b[i]);
	return h;
}

/* extism_output sets the call's output to n bytes. */
static inline void extism_output(const uint8_t *b, uint64_t n) {
	extism_handle h = extism_store(b, n);
	extism_output_set(h, n);
	extism_free(h);
}

/* extism_error sets the call's error message (NUL-terminated). */
static inline void extism_error(const char *msg) {
	extism_error_set(extism_store((const uint8_t *)msg, __builtin_strlen(msg)));
}

#endif
