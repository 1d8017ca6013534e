/*
 * tests/fuzz/fuzz_directive.c - the directive translator
 * (lib/directive/directive.h) on arbitrary source text: it must translate
 * or fail with a message, never crash, hang or leak.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "directive/directive.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *src, *out = NULL;
	int count;

	if (size > 1 << 16 || !(src = malloc(size + 1)))
		return 0;
	memcpy(src, data, size);
	src[size] = 0;
	(void)hml__directive_present(src);
	if (hml__directive_translate(&out, &count, src, "fuzz.c") == 0)
		free(out);
	free(src);
	return 0;
}
