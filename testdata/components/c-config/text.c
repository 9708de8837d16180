// A component's core module in C that reads wasi:config/store, with the
// canonical ABI written by hand (no bindings generator): see world.wit.
// Built into c-config.wasm by ../build.sh.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../cabi.h"

// store.get(key) -> result<option<string>, error>, lowered: the key's
// pointer and length, and a return area the host writes the result to:
// result discriminant (u8) at 0; ok: option discriminant (u8) at 4, the
// string (pointer, length) at 8; err: the error variant's discriminant
// at 4, its string at 8. The strings are allocated with cabi_realloc.
__attribute__((import_module("wasi:config/store@0.2.0-draft"), import_name("get")))
extern void store_get(const char *key, size_t len, uint8_t *ret);

static uint32_t ret[3];

EXPORT("setting")
uint32_t *setting(char *key, size_t len) {
	_Alignas(4) uint8_t area[16];
	store_get(key, len, area);
	if (len)
		free(key);
	uint32_t s = *(uint32_t *)(area + 8), n = *(uint32_t *)(area + 12);
	// option<string>: discriminant at 0, the string at 4. An error is
	// no value (its text freed).
	ret[0] = area[0] == 0 && area[4] == 1;
	ret[1] = s;
	ret[2] = n;
	if (!ret[0] && (area[0] == 1 || area[4] == 1) && n)
		free((void *)(uintptr_t)s);
	return ret;
}

EXPORT("cabi_post_setting")
void setting_post(uint32_t *r) {
	if (r[0] && r[2])
		free((void *)(uintptr_t)r[1]);
}
