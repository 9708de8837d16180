// What every C component of the corpus exports for the canonical ABI:
// the EXPORT macro and cabi_realloc, through which the host allocates
// the arguments it lowers and the strings an import returns. Included
// once by each NAME/text.c (one translation unit per component).
#include <stdint.h>
#include <stdlib.h>

#define EXPORT(name) __attribute__((export_name(name)))

EXPORT("cabi_realloc")
void *cabi_realloc(void *old, size_t old_size, size_t align, size_t new_size) {
	(void)old_size;
	if (new_size == 0)
		return (void *)align;
	void *p = realloc(old, new_size);
	if (!p)
		abort();
	return p;
}
