/*
 * lib/core/json.h - how hml's JSON files write and read a figure
 * (internal): a number hml does not have (NaN: not measured, not
 * applicable) is written as null and read back as NaN, in the profile,
 * the manifest's records, the trial history and the worker protocol alike.
 */
#ifndef HML_CORE_JSON_H
#define HML_CORE_JSON_H

#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

/** v as a JSON number, or null when v is not finite. A new reference
 *  (NULL: out of memory). */
json_t *hml__json_real(double v);

/** obj[key] as a number; NaN when obj is NULL, the key is absent, null or
 *  not a number. */
double hml__json_number(const json_t *obj, const char *key);

/** obj[key] as a string borrowed from obj; NULL when obj is NULL, the key
 *  is absent or not a string. */
const char *hml__json_string(const json_t *obj, const char *key);

#ifdef __cplusplus
}
#endif
#endif
