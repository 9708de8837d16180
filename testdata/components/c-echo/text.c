// The benchmarks' string -> string component (bench/run.sh): echo returns
// its argument's bytes as they are, freed by its post-return. The
// canonical ABI is written by hand, as in ../c-text. Built into
// c-echo.wasm by ../build.sh.
#include <stdint.h>
#include <stdlib.h>

#include "../cabi.h"

// The result: pointer and length, in a return area.
static uint32_t ret[2];

EXPORT("echo")
uint32_t *echo(char *text, size_t len) {
	ret[0] = (uint32_t)(uintptr_t)text;
	ret[1] = (uint32_t)len;
	return ret;
}

EXPORT("cabi_post_echo")
void echo_post(uint32_t *r) {
	if (r[1])
		free((void *)(uintptr_t)r[0]);
}
