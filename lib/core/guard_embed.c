/*
 * lib/core/guard_embed.c - a guard from the statistics a compiled model
 * embeds (guard.h, part 4): what HML_GUARD_<LABEL> names, a spec resolved
 * against them, and a guard file checked to be the same model's.
 */
#include <math.h>
#include <string.h>

#include "core/error.h"
#include "core/guard.h"

int hml__guard_value_is_spec(const char *value)
{
	return value && !strchr(value, '/');
}

/* Statistics from a compiled model's JSON text (*st yours when 0). */
static int stats_from_text(hml__guard_stats *st, const char *text, const char *what)
{
	json_error_t jerr;
	json_t *j;
	int rc;

	if (!(j = json_loads(text, 0, &jerr)))
		return hml__error_set(HML_EINVALID, "%s: its input statistics are not JSON: %s",
		                      what, jerr.text);
	rc = hml__guard_stats_from_json(st, j, what);
	json_decref(j);
	return rc;
}

int hml__guard_from_stats_text(hml__guard *out, const char *spec_text, const char *stats_json,
                               const char *what)
{
	hml__guard_spec spec;
	hml__guard_stats st;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = hml__guard_spec_parse(&spec, spec_text)) < 0)
		return rc;
	if (spec.kind == HML__GUARD_NONE) {
		out->spec = spec;
		return 0;
	}
	if (spec.kind == HML__GUARD_ENSEMBLE)
		return hml__error_set(HML_ENOTSUPPORTED, "guard '%s' needs its members' files, which "
		                      "only a guard file names (hml deploy --guard ensemble)",
		                      spec_text);
	if (!stats_json || !*stats_json)
		return hml__error_set(HML_ENOTSUPPORTED, "%s carries no input statistics for guard "
		                      "'%s'", what, spec_text);
	if ((rc = stats_from_text(&st, stats_json, what)) < 0)
		return rc;
	if ((rc = hml__guard_make(out, &spec, &st)) < 0)
		hml__error_set(rc, "%s: %s", what, hml_error_last()->message);
	hml__guard_stats_release(&st);
	return rc;
}

/* a and b equal within HML__GUARD_SAME_REL of the larger magnitude. */
static int close_enough(double a, double b)
{
	return fabs(a - b) <= HML__GUARD_SAME_REL * fmax(fabs(a), fabs(b));
}

static int same_reals(const double *a, const double *b, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		if (!close_enough(a[i], b[i]))
			return 0;
	return 1;
}

int hml__guard_stats_same(const hml__guard_stats *a, const hml__guard_stats *b)
{
	if (a->features != b->features || !same_reals(a->min, b->min, a->features) ||
	    !same_reals(a->max, b->max, a->features) || !a->mean != !b->mean)
		return 0;
	return !a->mean || same_reals(a->mean, b->mean, a->features);
}

int hml__guard_stats_match_text(const hml__guard_stats *s, const char *stats_json,
                                const char *what)
{
	hml__guard_stats m;
	int rc, same;

	if ((rc = stats_from_text(&m, stats_json, what)) < 0)
		return rc;
	same = hml__guard_stats_same(s, &m);
	hml__guard_stats_release(&m);
	return same ? 0 : hml__error_set(HML_EINVALID, "%s: the statistics differ", what);
}
