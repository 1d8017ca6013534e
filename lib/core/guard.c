/*
 * lib/core/guard.c - guard specs, statistics, guard files and the row
 * check (guard.h): the writer and the reader of each side by side. The
 * ensemble's part, the calibration levels and quantiles are in
 * guard_ensemble.c, which needs nothing of this file.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/guard.h"
#include "core/json.h"
#include "core/read_file.h"
#include "core/util.h"

const char *hml__guard_kind_name(hml__guard_kind k)
{
	switch (k) {
	case HML__GUARD_NONE: return "none";
	case HML__GUARD_BOUNDS: return "bounds";
	case HML__GUARD_DISTANCE: return "distance";
	case HML__GUARD_ENSEMBLE: return "ensemble";
	}
	return "?";
}

/* "key=value" of a spec's parameter list into *v. */
static int spec_param(const char *text, const char *p, size_t len, const char *key, double *v)
{
	char num[64];
	size_t klen = strlen(key);

	if (len <= klen + 1 || strncmp(p, key, klen) != 0 || p[klen] != '=')
		return hml__error_set(HML_EINVALID, "malformed guard '%s': expected %s=NUMBER, "
		                      "got '%.*s'", text, key, (int)len, p);
	if (len - klen - 1 >= sizeof(num))
		return hml__error_set(HML_EINVALID, "malformed guard '%s': %s is too long", text, key);
	memcpy(num, p + klen + 1, len - klen - 1);
	num[len - klen - 1] = '\0';
	if (hml__parse_double(num, v) < 0 || !isfinite(*v))
		return hml__error_set(HML_EINVALID, "malformed guard '%s': %s '%s' is not a number",
		                      text, key, num);
	return 0;
}

int hml__guard_spec_parse(hml__guard_spec *out, const char *text)
{
	const char *colon;
	size_t n;
	int rc;

	memset(out, 0, sizeof(*out));
	out->fa = 0.01;
	if (!text || !*text)
		return hml__error_set(HML_EINVALID, "malformed guard '': expected none, "
		                      "bounds[:margin=M], distance[:fa=A] or ensemble[:fa=A]");
	colon = strchr(text, ':');
	n = colon ? (size_t)(colon - text) : strlen(text);
	if (n == 4 && strncmp(text, "none", 4) == 0 && !colon)
		return 0;
	if (n == 6 && strncmp(text, "bounds", 6) == 0) {
		out->kind = HML__GUARD_BOUNDS;
		if (colon && (rc = spec_param(text, colon + 1, strlen(colon + 1), "margin",
		                              &out->margin)) < 0)
			return rc;
		if (out->margin < 0 || out->margin > 10)
			return hml__error_set(HML_EINVALID, "malformed guard '%s': margin must be in "
			                      "[0, 10], a fraction of each feature's range", text);
		return 0;
	}
	if ((n == 8 && strncmp(text, "distance", 8) == 0) ||
	    (n == 8 && strncmp(text, "ensemble", 8) == 0)) {
		out->kind = text[0] == 'd' ? HML__GUARD_DISTANCE : HML__GUARD_ENSEMBLE;
		if (colon && (rc = spec_param(text, colon + 1, strlen(colon + 1), "fa", &out->fa)) < 0)
			return rc;
		if (!(out->fa > 0 && out->fa <= 0.5))
			return hml__error_set(HML_EINVALID, "malformed guard '%s': fa must be in "
			                      "(0, 0.5], the false-alarm rate", text);
		return 0;
	}
	return hml__error_set(HML_EINVALID, "malformed guard '%s': expected none, "
	                      "bounds[:margin=M], distance[:fa=A] or ensemble[:fa=A]", text);
}

void hml__guard_spec_format(char *buf, size_t size, const hml__guard_spec *s)
{
	if (s->kind == HML__GUARD_BOUNDS)
		snprintf(buf, size, "bounds:margin=%g", s->margin);
	else if (s->kind == HML__GUARD_DISTANCE || s->kind == HML__GUARD_ENSEMBLE)
		snprintf(buf, size, "%s:fa=%g", hml__guard_kind_name(s->kind), s->fa);
	else
		snprintf(buf, size, "none");
}

void hml__guard_stats_release(hml__guard_stats *s)
{
	free(s->min);
	free(s->max);
	free(s->mean);
	free(s->whiten);
	hml__guard_ensemble_release(&s->ens);
	free(s->component);
	memset(s, 0, sizeof(*s));
}

static json_t *reals(const double *v, size_t n)
{
	json_t *a;

	if (!v)
		return json_null();
	a = json_array();
	for (size_t i = 0; a && i < n; i++)
		json_array_append_new(a, hml__json_real(v[i]));
	return a;
}

/* [[p, q[0]], ...] of the levels; with features > 0, [[p, [q[k F], ..]], ...]. */
static json_t *quantiles(const double *q, size_t features)
{
	json_t *a = json_array();

	for (int k = 0; a && k < HML__GUARD_NLEVELS; k++)
		json_array_append_new(a, json_pack("[f, o]", HML__GUARD_LEVELS[k], features ?
		                                   reals(q + (size_t)k * features, features) :
		                                   hml__json_real(q[k])));
	return a;
}

json_t *hml__guard_stats_json(const hml__guard_stats *s)
{
	size_t f = (size_t)s->features;

	return json_pack("{s:I, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
	                 "features", (json_int_t)s->features, "rows", (json_int_t)s->rows,
	                 "calibration_rows", (json_int_t)s->calibration_rows,
	                 "min", reals(s->min, f), "max", reals(s->max, f),
	                 "mean", reals(s->mean, f), "whiten", reals(s->whiten, f * f),
	                 "quantiles", s->mean ? quantiles(s->quantile, 0) : json_null(),
	                 "component_quantiles", s->mean && s->component ?
	                                        quantiles(s->component, f) : json_null(),
	                 "ensemble", hml__guard_ensemble_json(&s->ens));
}

/* obj[key]: n finite numbers into a new array (NULL for null when may_null). */
static int read_reals(double **out, const json_t *obj, const char *key, size_t n,
                      int may_null, const char *what)
{
	const json_t *a = json_object_get(obj, key);

	*out = NULL;
	if (may_null && (!a || json_is_null(a)))
		return 0;
	if (!json_is_array(a) || json_array_size(a) != n)
		return hml__error_set(HML_EINVALID, "%s: guard statistics '%s' must be %zu numbers",
		                      what, key, n);
	if (!(*out = malloc(n * sizeof(double))))
		return hml__error_oom();
	for (size_t i = 0; i < n; i++) {
		const json_t *v = json_array_get(a, i);
		if (!json_is_number(v) || !isfinite(json_number_value(v)))
			return hml__error_set(HML_EINVALID, "%s: guard statistics '%s'[%zu] is not a "
			                      "finite number", what, key, i);
		(*out)[i] = json_number_value(v);
	}
	return 0;
}

/* obj[key]: HML__GUARD_NLEVELS [level, distance] pairs into d (features
 * 0), or [level, [features distances]] into d[k * features + i]. */
static int read_quantiles(double *d, const json_t *obj, const char *key, size_t features,
                          const char *what)
{
	const json_t *q = json_object_get(obj, key);

	if (!json_is_array(q) || json_array_size(q) != HML__GUARD_NLEVELS)
		return hml__error_set(HML_EINVALID, "%s: guard statistics '%s' must be %d pairs",
		                      what, key, HML__GUARD_NLEVELS);
	for (int k = 0; k < HML__GUARD_NLEVELS; k++) {
		const json_t *v = json_array_get(json_array_get(q, (size_t)k), 1);
		size_t n = features ? features : 1;
		for (size_t i = 0; i < n; i++) {
			const json_t *e = features ? json_array_get(v, i) : v;
			if (!json_is_number(e) || (features && json_array_size(v) != features))
				return hml__error_set(HML_EINVALID, "%s: guard statistics '%s'[%d] has "
				                      "no distance%s", what, key, k,
				                      features ? " per feature" : "");
			d[(size_t)k * n + i] = json_number_value(e);
		}
	}
	return 0;
}

int hml__guard_stats_from_json(hml__guard_stats *out, const json_t *j, const char *what)
{
	json_int_t f = json_integer_value(json_object_get(j, "features"));
	const json_t *q;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(j) || f < 1 || f > 1000000)
		return hml__error_set(HML_EINVALID, "%s: guard statistics lack a feature count", what);
	out->features = f;
	out->rows = json_integer_value(json_object_get(j, "rows"));
	out->calibration_rows = json_integer_value(json_object_get(j, "calibration_rows"));
	if ((rc = read_reals(&out->min, j, "min", (size_t)f, 0, what)) < 0 ||
	    (rc = read_reals(&out->max, j, "max", (size_t)f, 0, what)) < 0 ||
	    (rc = read_reals(&out->mean, j, "mean", (size_t)f, 1, what)) < 0 ||
	    (rc = read_reals(&out->whiten, j, "whiten", (size_t)(f * f), 1, what)) < 0)
		goto fail;
	if (!out->mean != !out->whiten) {
		rc = hml__error_set(HML_EINVALID, "%s: guard statistics have only one of mean and "
		                    "whiten", what);
		goto fail;
	}
	if (out->mean && (rc = read_quantiles(out->quantile, j, "quantiles", 0, what)) < 0)
		goto fail;
	q = json_object_get(j, "component_quantiles");
	if (out->mean && q && !json_is_null(q)) {   /* absent: a card from before it */
		if (!(out->component = malloc((size_t)f * HML__GUARD_NLEVELS * sizeof(double)))) {
			rc = hml__error_oom();
			goto fail;
		}
		if ((rc = read_quantiles(out->component, j, "component_quantiles", (size_t)f,
		                         what)) < 0)
			goto fail;
	}
	if ((rc = hml__guard_ensemble_from_json(&out->ens, json_object_get(j, "ensemble"),
	                                        what)) < 0)
		goto fail;
	return 0;
fail:
	hml__guard_stats_release(out);
	return rc;
}

double hml__guard_quantile(const double *q, size_t stride, double p)
{
	if (p <= HML__GUARD_LEVELS[0])
		return q[0];
	for (int k = 1; k < HML__GUARD_NLEVELS; k++)
		if (p <= HML__GUARD_LEVELS[k]) {
			double a = HML__GUARD_LEVELS[k - 1], b = HML__GUARD_LEVELS[k];
			double t = (p - a) / (b - a), lo = q[(size_t)(k - 1) * stride];
			return lo + t * (q[(size_t)k * stride] - lo);
		}
	return q[(size_t)(HML__GUARD_NLEVELS - 1) * stride];
}

double hml__guard_threshold_of(const double q[HML__GUARD_NLEVELS], double fa)
{
	return hml__guard_quantile(q, 1, 1.0 - fa);
}

static double *dup_reals(const double *v, size_t n)
{
	double *d = v ? malloc(n * sizeof(double)) : NULL;

	if (d)
		memcpy(d, v, n * sizeof(double));
	return d;
}

int hml__guard_make(hml__guard *out, const hml__guard_spec *spec, const hml__guard_stats *st)
{
	size_t f = (size_t)st->features;
	hml__guard_stats *c = &out->stats;

	memset(out, 0, sizeof(*out));
	out->spec = *spec;
	if (spec->kind == HML__GUARD_DISTANCE && !st->mean)
		return hml__error_set(HML_ENOTSUPPORTED, "the model has no input statistics for "
		                      "guard 'distance' (more than %d features, or too few rows)",
		                      HML__GUARD_MAX_DISTANCE_FEATURES);
	if (spec->kind == HML__GUARD_ENSEMBLE && st->ens.members < HML__GUARD_ENSEMBLE_MIN)
		return hml__error_set(HML_ENOTSUPPORTED, "the model was trained without --ensemble: "
		                      "guard 'ensemble' needs the disagreement of its members "
		                      "(hml train --ensemble N)");
	if (spec->kind == HML__GUARD_DISTANCE && !st->component)
		return hml__error_set(HML_ENOTSUPPORTED, "the model's input statistics predate the "
		                      "per-feature calibration of guard 'distance': retrain the "
		                      "model, or deploy guard 'bounds'");
	*c = *st;
	c->min = dup_reals(st->min, f);
	c->max = dup_reals(st->max, f);
	c->mean = dup_reals(st->mean, f);
	c->whiten = dup_reals(st->whiten, f * f);
	c->ens.scale = dup_reals(st->ens.scale, (size_t)st->ens.outputs);
	c->component = dup_reals(st->component, f * HML__GUARD_NLEVELS);
	out->lo = malloc(f * sizeof(double));
	out->hi = malloc(f * sizeof(double));
	out->component_threshold = malloc(f * sizeof(double));
	if (!c->min || !c->max || !out->lo || !out->hi || !out->component_threshold ||
	    (st->mean && (!c->mean || !c->whiten)) || (st->ens.scale && !c->ens.scale) ||
	    (st->component && !c->component)) {
		hml__guard_release(out);
		return hml__error_oom();
	}
	/* The card keeps 15 significant digits (lib/store): without the 1e-14
	 * a row at a training extreme that is not short in decimal (float pi,
	 * miniBUDE's 180 degrees) would fall just outside what was read. */
	for (size_t i = 0; i < f; i++) {
		double w = spec->margin * (c->max[i] - c->min[i]);
		out->lo[i] = c->min[i] - w - 1e-14 * fabs(c->min[i]);
		out->hi[i] = c->max[i] + w + 1e-14 * fabs(c->max[i]);
	}
	/* |z|_2 at fa/2, each of the F components at fa/(2F): at most fa of
	 * the calibration rows fail a test (the union bound). */
	out->threshold = NAN;
	for (size_t i = 0; i < f; i++)
		out->component_threshold[i] = NAN;
	if (spec->kind == HML__GUARD_DISTANCE) {
		out->threshold = hml__guard_quantile(c->quantile, 1, 1.0 - spec->fa / 2);
		for (size_t i = 0; i < f; i++)
			out->component_threshold[i] = hml__guard_quantile(
				c->component + i, f, 1.0 - spec->fa / (2.0 * (double)f));
	}
	if (spec->kind == HML__GUARD_ENSEMBLE)
		out->threshold = hml__guard_threshold_of(c->ens.quantile, spec->fa);
	return 0;
}

void hml__guard_release(hml__guard *g)
{
	if (!g)
		return;
	for (int64_t m = 0; g->member && m < g->stats.ens.members; m++)
		free(g->member[m]);
	free(g->member);
	hml__guard_stats_release(&g->stats);
	free(g->lo);
	free(g->hi);
	free(g->component_threshold);
	memset(g, 0, sizeof(*g));
}

json_t *hml__guard_file_json(const hml__guard *g)
{
	char text[64];
	json_t *doc, *m;

	hml__guard_spec_format(text, sizeof(text), &g->spec);
	doc = json_pack("{s:i, s:s, s:s, s:f, s:f, s:o, s:o, s:o}",
	                "schema_version", HML__GUARD_SCHEMA,
	                "spec", text, "kind", hml__guard_kind_name(g->spec.kind),
	                "margin", g->spec.margin, "fa", g->spec.fa,
	                "threshold", hml__json_real(g->threshold),
	                "component_thresholds", g->spec.kind == HML__GUARD_DISTANCE ?
	                reals(g->component_threshold, (size_t)g->stats.features) : json_null(),
	                "stats", hml__guard_stats_json(&g->stats));
	if (!doc || g->spec.kind != HML__GUARD_ENSEMBLE || !g->member)
		return doc;
	if (!(m = json_array()) || json_object_set_new(doc, "members", m) < 0) {
		json_decref(doc);
		return NULL;
	}
	for (int64_t k = 0; k < g->stats.ens.members; k++)
		json_array_append_new(m, json_string(g->member[k]));
	return doc;
}

/* The guard file's "members": N path strings, into the guard. */
static int read_members(hml__guard *g, const json_t *doc, const char *what)
{
	const json_t *a = json_object_get(doc, "members");
	const char *paths[HML__GUARD_ENSEMBLE_MAX];
	int64_t n = g->stats.ens.members;

	if (!json_is_array(a) || (int64_t)json_array_size(a) != n)
		return hml__error_set(HML_EINVALID, "%s: 'members' must list the ensemble's %lld "
		                      "member files", what, (long long)n);
	for (int64_t k = 0; k < n; k++)
		if (!(paths[k] = json_string_value(json_array_get(a, (size_t)k))) || !*paths[k])
			return hml__error_set(HML_EINVALID, "%s: 'members'[%lld] is not a path", what,
			                      (long long)k);
	return hml__guard_set_members(g, paths, n);
}

int hml__guard_file_read(hml__guard *out, const char *path)
{
	hml__guard_spec spec;
	hml__guard_stats st;
	json_error_t jerr;
	json_t *doc = NULL;
	char *text = NULL, what[4200];
	size_t size;
	double th, *comp = NULL;
	json_int_t schema;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = hml__read_file(path, &text, &size)) < 0)
		return hml__error_set(HML_EIO, "cannot read guard '%s': %s", path,
		                      hml_error_last()->message);
	snprintf(what, sizeof(what), "guard '%s'", path);
	if (!(doc = json_loadb(text, size, 0, &jerr))) {
		rc = hml__error_set(HML_EINVALID, "%s: %s (line %d)", what, jerr.text, jerr.line);
		goto done;
	}
	schema = json_integer_value(json_object_get(doc, "schema_version"));
	if (schema != 1 && schema != HML__GUARD_SCHEMA) {
		rc = hml__error_set(HML_EINVALID, "%s: schema_version is not 1 or %d", what,
		                    HML__GUARD_SCHEMA);
		goto done;
	}
	if ((rc = hml__guard_spec_parse(&spec, hml__json_string(doc, "spec"))) < 0)
		goto done;
	if (spec.kind == HML__GUARD_DISTANCE && schema == 1) {
		rc = hml__error_set(HML_EINVALID, "%s: a distance guard of schema 1 (Mahalanobis "
		                    "only) is no longer read: redeploy the model with --guard", what);
		goto done;
	}
	if ((rc = hml__guard_stats_from_json(&st, json_object_get(doc, "stats"), what)) < 0)
		goto done;
	rc = hml__guard_make(out, &spec, &st);
	hml__guard_stats_release(&st);
	if (rc < 0) {
		rc = hml__error_set(rc, "%s: %s", what, hml_error_last()->message);
		goto done;
	}
	/* The thresholds deployed win over ones recomputed from the quantiles. */
	th = hml__json_number(doc, "threshold");
	if (spec.kind == HML__GUARD_DISTANCE && isfinite(th) &&
	    json_is_array(json_object_get(doc, "component_thresholds"))) {
		if ((rc = read_reals(&comp, doc, "component_thresholds",
		                     (size_t)out->stats.features, 0, what)) < 0) {
			hml__guard_release(out);
			goto done;
		}
		out->threshold = th;
		memcpy(out->component_threshold, comp,
		       (size_t)out->stats.features * sizeof(double));
	}
	if (spec.kind == HML__GUARD_ENSEMBLE && isfinite(th))
		out->threshold = th;
	if (spec.kind == HML__GUARD_ENSEMBLE && (rc = read_members(out, doc, what)) < 0)
		hml__guard_release(out);
done:
	json_decref(doc);
	free(comp);
	free(text);
	return rc;
}

double hml__guard_distance(const hml__guard *g, const double *x, double *z)
{
	const hml__guard_stats *s = &g->stats;
	int64_t f = s->features;
	double sq = 0.0;

	if (!s->whiten)
		return 0.0;
	for (int64_t i = 0; i < f; i++) {
		const double *w = s->whiten + i * f;
		double v = 0.0;
		for (int64_t k = 0; k <= i; k++)   /* W is lower triangular */
			v += w[k] * (x[k] - s->mean[k]);
		sq += v * v;
		if (z)
			z[i] = v;
	}
	return sqrt(sq);
}

/* Each |z_i| within its threshold (a NaN is not), then |z|_2 within its. */
static int distance_row(const hml__guard *g, const double *x)
{
	const hml__guard_stats *s = &g->stats;
	int64_t f = s->features;
	double sq = 0.0;

	for (int64_t i = 0; i < f; i++) {
		const double *w = s->whiten + i * f;
		double v = 0.0;
		for (int64_t k = 0; k <= i; k++)
			v += w[k] * (x[k] - s->mean[k]);
		if (!(fabs(v) <= g->component_threshold[i]))
			return 1;
		sq += v * v;
	}
	return !(sqrt(sq) <= g->threshold);
}

int hml__guard_row(const hml__guard *g, const double *x)
{
	int64_t f = g->stats.features;

	switch (g->spec.kind) {
	case HML__GUARD_BOUNDS:
		for (int64_t i = 0; i < f; i++)
			if (!(x[i] >= g->lo[i] && x[i] <= g->hi[i]))
				return 1;
		return 0;
	case HML__GUARD_DISTANCE:
		return distance_row(g, x);
	default:
		return 0;
	}
}
