/*
 * lib/core/json.c - figures in hml's JSON files (json.h).
 */
#include <math.h>

#include "core/json.h"

json_t *hml__json_real(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

double hml__json_number(const json_t *obj, const char *key)
{
	const json_t *v = obj ? json_object_get(obj, key) : NULL;

	return json_is_number(v) ? json_number_value(v) : NAN;
}

const char *hml__json_string(const json_t *obj, const char *key)
{
	const json_t *v = obj ? json_object_get(obj, key) : NULL;

	return json_is_string(v) ? json_string_value(v) : NULL;
}
