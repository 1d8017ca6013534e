/*
 * tests/fuzz/fuzz_files.h - for targets whose parser reads a file: the
 * input is written to one file in a private temporary directory made on
 * the first call.
 */
#ifndef HML_FUZZ_FILES_H
#define HML_FUZZ_FILES_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The private directory, made once under $TMPDIR (default /tmp):
 * scripts/fuzz.sh points TMPDIR into its own work directory and removes
 * that, so that fuzz runs side by side never remove each other's files. */
static const char *fuzz_dir(void)
{
	static char dir[200];

	if (!dir[0]) {
		const char *tmp = getenv("TMPDIR");

		if (!tmp || !*tmp || strlen(tmp) > sizeof(dir) - 20)
			tmp = "/tmp";
		snprintf(dir, sizeof(dir), "%s/hml-fuzz-XXXXXX", tmp);
		if (!mkdtemp(dir))
			abort();
	}
	return dir;
}

/* Write data to DIR/name and return the path (static storage). */
static const char *fuzz_write(const char *name, const uint8_t *data, size_t size)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", fuzz_dir(), name);
	if (!(f = fopen(path, "wb")))
		abort();
	if (size && fwrite(data, 1, size, f) != size)
		abort();
	if (fclose(f) != 0)
		abort();
	return path;
}

#endif
