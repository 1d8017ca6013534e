/*
 * libFuzzer target: the architecture-spec grammar (lib/train/arch.c,
 * FAMILY[:WIDTHS][:ACTIVATION][:key=value]...) against the families'
 * limits. The input is the spec. A spec that parses must give a canonical
 * form that parses again to the same canonical form: hml train records
 * the canonical spec and hml search re-reads it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "train/arch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *spec = malloc(size + 1);
	hml__arch a, b;

	if (!spec)
		return 0;
	memcpy(spec, data, size);
	spec[size] = '\0';
	if (hml__arch_parse(&a, spec) == 0) {
		if (hml__arch_parse(&b, a.canonical) != 0 || strcmp(a.canonical, b.canonical) != 0)
			abort();
		if (a.nwidths < 1 || a.nwidths > HML__ARCH_MAX_LAYERS || a.act_index < 0 ||
		    a.act_index >= HML__ARCH_NACT || !(a.dropout >= 0 && a.dropout < 1))
			abort();
	}
	free(spec);
	return 0;
}
