/*
 * libFuzzer target: manifest.json loading and validation, then what the
 * commands do with a manifest that validated: look records up by id.
 */
#include <sys/stat.h>

#include <jansson.h>

#include "fuzz_files.h"
#include "store/store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const collections[] = { "datasets", "models", "deployments",
	                                           "evaluations", "compiled" };
	hml__store *s = NULL;

	fuzz_write("manifest.json", data, size);
	if (hml__store_open(&s, fuzz_dir(), 0) == 0) {
		const json_t *m = hml__store_manifest(s);

		for (size_t c = 0; c < sizeof(collections) / sizeof(collections[0]); c++) {
			const json_t *arr = json_object_get(m, collections[c]), *rec;
			size_t i;

			json_array_foreach(arr, i, rec)
				(void)hml__store_find(s, collections[c],
				                      json_string_value(json_object_get(rec, "id")));
		}
		hml__store_free(s);
	}
	return 0;
}
