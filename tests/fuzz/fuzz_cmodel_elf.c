/*
 * libFuzzer target: the ELF check of a compiled model
 * (runtime/loader/cmodel_elf.c), which reads a shared object's section
 * headers, dynamic symbol table and entry structure from the file before
 * dlopen may run any of its code. Every offset it reads comes from the
 * input; AddressSanitizer stops any read outside it. The input is copied
 * to a buffer of exactly its size so that a read one byte past is caught.
 * An accepted file answers its ABI version (1 to 3).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "loader/loader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *copy = malloc(size ? size : 1);
	int rc;

	if (!copy)
		return 0;
	if (size)
		memcpy(copy, data, size);
	rc = hml__cmodel_elf_check(copy, size, "fuzz.so");
	if ((rc < 1 || rc > 3) && rc != HML_EMODEL && rc != HML_ENOTSUPPORTED)
		abort();
	free(copy);
	return 0;
}
