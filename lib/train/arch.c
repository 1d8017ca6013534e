#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/error.h"
#include "core/util.h"
#include "hml_models.h"
#include "train/arch.h"
#include "train/categorical.h"

const char *const hml__arch_activations[HML__ARCH_NACT] = { "relu", "tanh", "gelu", "silu", "sigmoid" };

static const hml__model_family_src *find_family(const char *name, size_t len)
{
	for (size_t i = 0; i < HML__MODEL_NFAMILIES; i++)
		if (strlen(hml__model_families[i].family) == len &&
		    strncmp(name, hml__model_families[i].family, len) == 0)
			return &hml__model_families[i];
	return NULL;
}

const char *hml__arch_families(void)
{
	static char list[256];

	if (!list[0]) {
		size_t n = 0;

		for (size_t i = 0; i < HML__MODEL_NFAMILIES && n < sizeof(list); i++)
			n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", i ? ", " : "",
			                      hml__model_families[i].family);
	}
	return list;
}

const char *hml__arch_family_json(const char *family)
{
	const hml__model_family_src *f = family ? find_family(family, strlen(family)) : NULL;

	return f ? f->json : NULL;
}

void hml__arch_format_double(char *buf, size_t size, double v)
{
	snprintf(buf, size, "%.17g", v);
	for (int prec = 1; prec <= 17; prec++) {
		char t[64];

		snprintf(t, sizeof(t), "%.*g", prec, v);
		if (strtod(t, NULL) == v) {
			snprintf(buf, size, "%s", t);
			return;
		}
	}
}

/* --- the spec ------------------------------------------------------------ */

/* The family's limits and defaults, from its JSON description. */
typedef struct limits {
	int64_t layers[2], width[2], kernel[2], pool[2];
} limits;

/* Which key=value options a spec gave (each at most once). */
typedef struct seen_opts {
	int dropout, kernel, pool, head, residual, spatial;
} seen_opts;

static void json_limits(json_t *doc, const char *key, int64_t *range)
{
	json_t *v = json_object_get(json_object_get(doc, "limits"), key);

	if (json_is_array(v) && json_array_size(v) == 2 &&
	    json_is_integer(json_array_get(v, 0)) && json_is_integer(json_array_get(v, 1))) {
		range[0] = json_integer_value(json_array_get(v, 0));
		range[1] = json_integer_value(json_array_get(v, 1));
	}
}

/* "64x64" or "64,64": positive integers; 0 on success. */
static int parse_widths(const char *s, hml__arch *a)
{
	const char *p = s;

	a->nwidths = 0;
	for (;;) {
		size_t n = strcspn(p, "x,");
		char part[32];
		int64_t v;

		if (n == 0 || n >= sizeof(part) || a->nwidths == HML__ARCH_MAX_LAYERS)
			return -1;
		memcpy(part, p, n);
		part[n] = '\0';
		if (hml__parse_i64(part, &v) != 0 || v < 1)
			return -1;
		a->widths[a->nwidths++] = v;
		if (p[n] == '\0')
			return 0;
		p += n + 1;
	}
}

static int parse_widths_field(hml__arch *a, const char *x, const char *spec, const limits *lim)
{
	if (parse_widths(x, a) != 0)
		return hml__error_set(HML_EINVALID,
			"bad widths '%s' in arch '%s' (expected positive integers joined by 'x', e.g. 64x64)",
			x, spec);
	if (a->nwidths < lim->layers[0] || a->nwidths > lim->layers[1])
		return hml__error_set(HML_EINVALID, "arch '%s' has %d hidden layers; %s takes %lld to %lld",
		                      spec, a->nwidths, a->family, (long long)lim->layers[0],
		                      (long long)lim->layers[1]);
	for (int i = 0; i < a->nwidths; i++)
		if (a->widths[i] < lim->width[0] || a->widths[i] > lim->width[1])
			return hml__error_set(HML_EINVALID, "width %lld in arch '%s' is outside %lld to %lld",
			                      (long long)a->widths[i], spec, (long long)lim->width[0],
			                      (long long)lim->width[1]);
	return 0;
}

/* key=value; `seen` tracks which keys were given. */
/* cnnvec's pool=P and head=H. 1 when `x` is neither, else 0 or an error. */
static int parse_vec_option(hml__arch *a, const char *x, const char *val, const char *spec,
                            const limits *lim, seen_opts *seen)
{
	int64_t iv;

	if (strcmp(x, "pool") == 0) {
		if (seen->pool++)
			return hml__error_set(HML_EINVALID, "arch '%s' gives pool twice", spec);
		if (hml__parse_i64(val, &iv) != 0 || iv < lim->pool[0] || iv > lim->pool[1])
			return hml__error_set(HML_EINVALID,
				"bad pool '%s' in arch '%s' (expected an integer from %lld to %lld)",
				val, spec, (long long)lim->pool[0], (long long)lim->pool[1]);
		a->pool = (int)iv;
		return 0;
	}
	if (strcmp(x, "head") == 0) {
		if (seen->head++)
			return hml__error_set(HML_EINVALID, "arch '%s' gives head twice", spec);
		if (hml__parse_i64(val, &iv) != 0 || iv < 0 || iv > lim->width[1])
			return hml__error_set(HML_EINVALID,
				"bad head '%s' in arch '%s' (expected 0, no hidden head layer, to %lld units)",
				val, spec, (long long)lim->width[1]);
		a->head = iv;
		return 0;
	}
	return 1;
}

static int parse_option(hml__arch *a, char *x, char *eq, const char *spec, const limits *lim,
                        seen_opts *seen)
{
	const char *val = eq + 1;
	double dv;
	int64_t iv;
	int rc;

	*eq = '\0';
	if (strcmp(x, "dropout") == 0) {
		if (seen->dropout++)
			return hml__error_set(HML_EINVALID, "arch '%s' gives dropout twice", spec);
		if (hml__parse_double(val, &dv) != 0 || !(dv >= 0 && dv < 1))
			return hml__error_set(HML_EINVALID,
				"bad dropout '%s' in arch '%s' (expected a probability, 0 <= p < 1)", val, spec);
		a->dropout = dv;
		return 0;
	}
	if (strcmp(x, "kernel") == 0 && a->cnn) {
		if (seen->kernel++)
			return hml__error_set(HML_EINVALID, "arch '%s' gives kernel twice", spec);
		if (hml__parse_i64(val, &iv) != 0 || iv < lim->kernel[0] || iv > lim->kernel[1] ||
		    iv % 2 == 0)
			return hml__error_set(HML_EINVALID,
				"bad kernel '%s' in arch '%s' (expected an odd size from %lld to %lld)",
				val, spec, (long long)lim->kernel[0], (long long)lim->kernel[1]);
		a->kernel = (int)iv;
		return 0;
	}
	if (a->vec && (rc = parse_vec_option(a, x, val, spec, lim, seen)) <= 0)
		return rc;
	return hml__error_set(HML_EINVALID, "unknown option '%s' in arch '%s' (%s takes: %s)",
	                      x, spec, a->family,
	                      a->vec ? "dropout, kernel, pool, head" : a->cnn ? "dropout, kernel" : "dropout");
}

/* "spatial": cnnvec's flag (its last conv layer's maps are heatmaps). */
static int parse_spatial(hml__arch *a, const char *spec, seen_opts *seen)
{
	if (seen->spatial++)
		return hml__error_set(HML_EINVALID, "arch '%s' gives spatial twice", spec);
	if (!a->vec)
		return hml__error_set(HML_EINVALID, "arch '%s': spatial is an option of the cnnvec family "
		                      "only (%s does not take it)", spec, a->family);
	a->spatial = 1;
	return 0;
}

/* "residual": the cnn family's flag (cnnvec's outputs are not fields). */
static int parse_residual(hml__arch *a, const char *spec, seen_opts *seen)
{
	if (seen->residual++)
		return hml__error_set(HML_EINVALID, "arch '%s' gives residual twice", spec);
	if (!a->cnn || a->vec)
		return hml__error_set(HML_EINVALID, "arch '%s': residual is an option of the cnn family "
		                      "only (%s does not take it)", spec, a->family);
	a->residual = 1;
	return 0;
}

static int parse_activation(hml__arch *a, const char *x, const char *spec, int *seen)
{
	if ((*seen)++)
		return hml__error_set(HML_EINVALID, "arch '%s' gives the activation twice", spec);
	for (int k = 0; k < HML__ARCH_NACT; k++) {
		if (strcmp(x, hml__arch_activations[k]) == 0) {
			a->act = hml__arch_activations[k];
			a->act_index = k;
			return 0;
		}
	}
	return hml__error_set(HML_EINVALID,
		"unknown activation '%s' in arch '%s' (known: relu, tanh, gelu, silu, sigmoid)", x, spec);
}

/* What the spec left out, from the family's "defaults". */
static void apply_defaults(hml__arch *a, json_t *defs, int widths, int act, const seen_opts *seen)
{
	if (!widths) {
		json_t *w = json_object_get(defs, "widths"), *v;
		size_t i;

		a->nwidths = 0;
		json_array_foreach(w, i, v)
			if (a->nwidths < HML__ARCH_MAX_LAYERS)
				a->widths[a->nwidths++] = json_integer_value(v);
		if (a->nwidths == 0) {
			a->widths[0] = a->widths[1] = 64;
			a->nwidths = 2;
		}
	}
	if (!act) {
		const char *d = json_string_value(json_object_get(defs, "activation"));
		int once = 0;

		if (!d || parse_activation(a, d, "", &once) != 0) {
			a->act = hml__arch_activations[0];
			a->act_index = 0;
		}
	}
	if (!seen->kernel && a->cnn) {
		json_t *k = json_object_get(defs, "kernel");
		a->kernel = json_is_integer(k) ? (int)json_integer_value(k) : 3;
	}
	if (!seen->dropout) {
		json_t *p = json_object_get(defs, "dropout");
		a->dropout = json_is_number(p) ? json_number_value(p) : 0;
	}
	if (!seen->pool && a->vec) {
		json_t *p = json_object_get(defs, "pool");
		a->pool = json_is_integer(p) ? (int)json_integer_value(p) : 2;
	}
	if (!seen->head && a->vec) {
		json_t *h = json_object_get(defs, "head");
		a->head = json_is_integer(h) ? json_integer_value(h) : 0;
	}
}

static void make_canonical(hml__arch *a)
{
	size_t size = sizeof(a->canonical), n;
	char num[64];

	n = (size_t)snprintf(a->canonical, size, "%s:", a->family);
	for (int i = 0; i < a->nwidths && n < size; i++)
		n += (size_t)snprintf(a->canonical + n, size - n, "%s%lld", i ? "x" : "",
		                      (long long)a->widths[i]);
	if (n < size)
		n += (size_t)snprintf(a->canonical + n, size - n, ":%s", a->act);
	if (a->cnn && n < size)
		n += (size_t)snprintf(a->canonical + n, size - n, ":kernel=%d", a->kernel);
	if (a->vec && n < size)
		n += (size_t)snprintf(a->canonical + n, size - n, ":pool=%d:head=%lld", a->pool,
		                      (long long)a->head);
	if (a->dropout > 0 && n < size) {
		hml__arch_format_double(num, sizeof(num), a->dropout);
		n += (size_t)snprintf(a->canonical + n, size - n, ":dropout=%s", num);
	}
	if (a->residual && n < size)
		n += (size_t)snprintf(a->canonical + n, size - n, ":residual");
	if (a->spatial && n < size)
		snprintf(a->canonical + n, size - n, ":spatial");
}

/* The fields after the family, in `rest` (modified in place). */
static int parse_fields(hml__arch *a, char *rest, const char *spec, json_t *doc)
{
	limits lim = { { 1, 32 }, { 1, 16384 }, { 1, 15 }, { 1, 16 } };
	seen_opts seen = { 0, 0, 0, 0, 0, 0 };
	int widths = 0, act = 0, rc = 0;
	char *x = rest;

	json_limits(doc, "layers", lim.layers);
	json_limits(doc, "width", lim.width);
	json_limits(doc, "kernel", lim.kernel);
	json_limits(doc, "pool", lim.pool);
	if (lim.layers[1] > HML__ARCH_MAX_LAYERS)
		lim.layers[1] = HML__ARCH_MAX_LAYERS;
	while (x && rc == 0) {
		char *colon = strchr(x, ':'), *eq;

		if (colon)
			*colon = '\0';
		if (!*x)
			rc = hml__error_set(HML_EINVALID, "empty field in arch '%s'", spec);
		else if ((eq = strchr(x, '=')))
			rc = parse_option(a, x, eq, spec, &lim, &seen);
		else if (strcmp(x, "residual") == 0)
			rc = parse_residual(a, spec, &seen);
		else if (strcmp(x, "spatial") == 0)
			rc = parse_spatial(a, spec, &seen);
		else if (*x >= '0' && *x <= '9')
			rc = widths++ ? hml__error_set(HML_EINVALID, "arch '%s' gives the widths twice", spec)
			              : parse_widths_field(a, x, spec, &lim);
		else
			rc = parse_activation(a, x, spec, &act);
		x = colon ? colon + 1 : NULL;
	}
	if (rc == 0)
		apply_defaults(a, json_object_get(doc, "defaults"), widths, act, &seen);
	return rc;
}

int hml__arch_parse(hml__arch *a, const char *spec)
{
	const hml__model_family_src *f;
	json_t *doc = NULL;
	json_error_t jerr;
	char *copy = NULL;
	size_t flen;
	int rc;

	memset(a, 0, sizeof(*a));
	if (!spec)
		spec = "mlp:64x64:relu";
	flen = strcspn(spec, ":");
	if (flen == 0)
		return hml__error_set(HML_EINVALID, "arch '%s' names no model family (families: %s)",
		                      spec, hml__arch_families());
	if (!(f = find_family(spec, flen)))
		return hml__error_set(HML_EINVALID, "unknown model family '%.*s' in arch '%s' (families: %s)",
		                      (int)flen, spec, spec, hml__arch_families());
	a->family = f->family;
	a->template_src = f->ts;
	a->vec = strcmp(f->family, "cnnvec") == 0;
	a->cnn = a->vec || strcmp(f->family, "cnn") == 0;
	if (!(doc = json_loads(f->json, 0, &jerr)))
		return hml__error_set(HML_EMODEL, "models/%s.json: %s (line %d)", f->family, jerr.text,
		                      jerr.line);
	if (spec[flen] == ':' && !(copy = hml__strdup(spec + flen + 1))) {
		rc = hml__error_oom();
		goto done;
	}
	if ((rc = parse_fields(a, spec[flen] == ':' ? copy : NULL, spec, doc)) == 0)
		make_canonical(a);
done:
	free(copy);
	json_decref(doc);
	return rc;
}

/* --- shapes -------------------------------------------------------------- */

static void shape_str(char *buf, size_t size, const int64_t *shape, int ndim)
{
	hml__format_shape(buf, size, shape, ndim);
}

/* cnnvec: a field in, any output flattened to a vector; the size of the
 * map after every layer's pooling must stay at least one pixel. A
 * spatial cnnvec's last layer is not pooled: 2 features per channel. */
static int vec_layout(hml__arch_layout *l, const hml__arch *a, const hml__dataset *d, const char *in)
{
	int64_t h, w;

	l->core_in_ndim = 3;
	l->core_in[0] = 1;
	memcpy(l->core_in + 3 - d->in_ndim, d->in_shape, sizeof(int64_t) * (size_t)d->in_ndim);
	l->core_out_ndim = 1;
	l->core_out[0] = l->out_features;
	h = l->core_in[1];
	w = l->core_in[2];
	for (int i = 0; i < a->nwidths - a->spatial; i++) {
		h /= a->pool;
		w /= a->pool;
		if (h < 1 || w < 1)
			return hml__error_set(HML_EINVALID,
				"arch '%s' pools rows %s below one pixel after layer %d (use fewer layers or a smaller pool)",
				a->canonical, in, i + 1);
	}
	l->map_height = h;
	l->map_width = w;
	l->flat_features = a->widths[a->nwidths - 1] * (a->spatial ? 2 : h * w);
	return 0;
}

int hml__arch_layout_of(hml__arch_layout *l, const hml__arch *a, const hml__dataset *d)
{
	char in[160], out[160];

	memset(l, 0, sizeof(*l));
	l->in_ndim = d->in_ndim;
	l->out_ndim = d->out_ndim;
	memcpy(l->in_row, d->in_shape, sizeof(int64_t) * (size_t)(d->in_ndim > 0 ? d->in_ndim : 0));
	memcpy(l->out_row, d->out_shape, sizeof(int64_t) * (size_t)(d->out_ndim > 0 ? d->out_ndim : 0));
	l->in_features = d->in_features;
	l->out_features = d->out_features;
	shape_str(in, sizeof(in), l->in_row, l->in_ndim);
	shape_str(out, sizeof(out), l->out_row, l->out_ndim);
	if (d->in_ndim < 1 || d->out_ndim < 1 || d->in_features < 1 || d->out_features < 1)
		return hml__error_set(HML_EINVALID, "data rows %s -> %s have no features", in, out);
	if (!a->cnn) {
		l->core_in_ndim = l->core_out_ndim = 1;
		l->core_in[0] = l->in_features;
		l->core_out[0] = l->out_features;
		return 0;
	}
	if (d->in_ndim != 2 && d->in_ndim != 3)
		return hml__error_set(HML_EINVALID,
			"arch '%s' needs whole-field rows [C,H,W] or [H,W]; region rows are %s", a->canonical, in);
	if (a->vec)
		return vec_layout(l, a, d, in);
	if (d->out_ndim != 2 && d->out_ndim != 3)
		return hml__error_set(HML_EINVALID,
			"arch '%s' needs whole-field outputs [C,H,W] or [H,W]; region outputs are %s "
			"(cnnvec maps fields to vectors)",
			a->canonical, out);
	/* [H, W] is one channel. */
	l->core_in_ndim = l->core_out_ndim = 3;
	l->core_in[0] = l->core_out[0] = 1;
	memcpy(l->core_in + 3 - d->in_ndim, d->in_shape, sizeof(int64_t) * (size_t)d->in_ndim);
	memcpy(l->core_out + 3 - d->out_ndim, d->out_shape, sizeof(int64_t) * (size_t)d->out_ndim);
	if (a->residual && memcmp(l->core_in, l->core_out, sizeof(l->core_in)) != 0)
		return hml__error_set(HML_EINVALID,
			"arch '%s' adds its input to its output, but the region maps rows %s to %s "
			"(residual needs equal input and output shapes)", a->canonical, in, out);
	if (l->core_in[1] != l->core_out[1] || l->core_in[2] != l->core_out[2])
		return hml__error_set(HML_EINVALID,
			"arch '%s' keeps the field's size, but the region maps %s to %s "
			"(cnnvec maps fields to vectors)", a->canonical, in, out);
	return 0;
}

int hml__arch_layout_categorical(hml__arch_layout *l, const hml__categorical *c, size_t n)
{
	int rc;

	if ((rc = hml__categorical_check(c, n, l->in_features)) < 0)
		return rc;
	l->ncategorical = (int64_t)n;
	l->core_in[0] = hml__categorical_width(c, n, l->in_features);
	l->onehot_features = l->core_in[0] - (l->in_features - (int64_t)n);
	return 0;
}
