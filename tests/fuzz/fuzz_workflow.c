/*
 * libFuzzer target: workflow.json loading (JSON, keys, types, ranges,
 * the program's path). A program file "prog" exists beside the file, so
 * that documents naming it get through every check.
 */
#include <sys/stat.h>

#include "fuzz_files.h"
#include "run/workflow.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	hml__workflow *w = NULL;
	const char *path;

	if (!ready) {
		char prog[256];

		snprintf(prog, sizeof(prog), "%s/prog", fuzz_dir());
		fuzz_write("prog", (const uint8_t *)"#!/bin/sh\n", 10);
		chmod(prog, 0755);
		ready = 1;
	}
	path = fuzz_write("workflow.json", data, size);
	if (hml__workflow_load(&w, path) == 0) {
		for (size_t i = 0; i < w->nregions; i++)
			(void)hml__workflow_region_find(w, w->regions[i].label);
		hml__workflow_free(w);
	}
	return 0;
}
