/*
 * lib/store/manifest_ids.h - the ids of a manifest's records and the ids
 * they refer to, checked against the one grammar (lib/store/ids.h)
 * (internal).
 */
#ifndef HML_LIB_MANIFEST_IDS_H
#define HML_LIB_MANIFEST_IDS_H

#include <stddef.h>

#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Check record `rec`, the i-th of collection `collection` of the manifest
 * at `path`: its "id" (required) is an id of the collection, and every id
 * it refers to, where present, is one of its kind (hml-manifest(5)):
 *   models       search.id, datasets[], data_sha256's keys
 *   deployments  model, compiled, search
 *   compiled     model
 *   evaluations  model, compiled
 *   searches     datasets[], data_sha256's keys, front[].model (or null),
 *                qoi_check.checks[].model
 * Errors: HML_EINVALID "manifest 'PATH' is corrupt: models[3].search.id
 * '../s1' is not a search id (s1, s2, ...)".
 */
int hml__manifest_ids_check(const char *path, const char *collection, size_t i,
                            const json_t *rec);

#ifdef __cplusplus
}
#endif
#endif
