/*
 * lib/search/trialmap.c - a search-space sample -> arch spec + training options.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "search/trialmap.h"
#include "train/arch.h"
#include "train/rollout.h"

static const char *const common_keys[] = {
	"layers", "width", "activation", "dropout", "lr", "batch", "weight_decay",
	"optimizer", "epochs", "rollout", NULL
};

/* K of "width_K", or 0 when `name` is not one. */
static long width_index(const char *name)
{
	char *end;
	long k;

	if (strncmp(name, "width_", 6) != 0 || name[6] < '0' || name[6] > '9')
		return 0;
	k = strtol(name + 6, &end, 10);
	return *end ? 0 : k;
}

static int known(const char *name, const char *family)
{
	int cnn = strcmp(family, "cnn") == 0, vec = strcmp(family, "cnnvec") == 0;

	for (int i = 0; common_keys[i]; i++)
		if (strcmp(common_keys[i], name) == 0)
			return 1;
	/* an iterative application's, not training options (lib/search/iterative.h) */
	if (strcmp(name, "k") == 0 || strcmp(name, "interleave") == 0)
		return 1;
	if ((cnn || vec) && strcmp(name, "kernel") == 0)
		return 1;
	if (cnn && strcmp(name, "residual") == 0)
		return 1;
	return vec && (strcmp(name, "pool") == 0 || strcmp(name, "head") == 0 ||
	               strcmp(name, "spatial") == 0);
}

int hml__trialmap_check(const hml__space *space, const char *family, const char *origin)
{
	const char *o = origin ? origin : "(search space)";

	if (!hml__arch_family_json(family))
		return hml__error_set(HML_EINVALID, "search space '%s': unknown model family '%s' "
		                      "(families: %s)", o, family, hml__arch_families());
	for (size_t i = 0; i < hml__space_count(space); i++) {
		const char *name = hml__space_name(space, i);
		long k = width_index(name);

		if (k > HML__ARCH_MAX_LAYERS || (k < 1 && strncmp(name, "width_", 6) == 0 &&
		                                 name[6] >= '0' && name[6] <= '9'))
			return hml__error_set(HML_EINVALID, "search space '%s': parameter '%s' names "
			                      "layer %ld (layers are 1 to %d)", o, name, k,
			                      HML__ARCH_MAX_LAYERS);
		if (k == 0 && !known(name, family))
			return hml__error_set(HML_EINVALID, "search space '%s': parameter '%s' is not an "
			                      "option of model family '%s' (known: layers, width, width_K, "
			                      "activation, dropout, %slr, batch, weight_decay, optimizer, "
			                      "epochs, rollout)", o, name, family,
			                      strcmp(family, "cnnvec") == 0 ? "kernel, pool, head, spatial, " :
			                      strcmp(family, "cnn") == 0 ? "kernel, residual, " : "");
	}
	return 0;
}

/* The values a "rollout" declaration can take: an int's low and high, or
 * a choice's values; -1 and an error when one is not 1 .. HML__ROLLOUT_MAX. */
static int rollout_range(const json_t *decl, const char *o, long long *most)
{
	const char *type = json_string_value(json_object_get(decl, "type"));
	const json_t *vals = json_object_get(decl, "values"), *v;
	json_t *bounds = NULL;
	size_t i;
	int rc = 0;

	if (type && strcmp(type, "int") == 0)
		vals = bounds = json_pack("[OO]", json_object_get(decl, "low"),
		                          json_object_get(decl, "high"));
	else if (!type || strcmp(type, "choice") != 0)
		return hml__error_set(HML_EINVALID, "search space '%s': parameter 'rollout' must be "
		                      "of type int or choice, not '%s'", o, type ? type : "?");
	*most = 1;
	json_array_foreach(vals, i, v) {
		double d = json_number_value(v);

		if (!json_is_number(v) || d != floor(d) || d < 1 || d > HML__ROLLOUT_MAX) {
			char text[64] = "?";

			if (json_is_number(v))
				hml__arch_format_double(text, sizeof(text), d);
			else if (json_is_string(v))
				snprintf(text, sizeof(text), "'%s'", json_string_value(v));
			rc = hml__error_set(HML_EINVALID, "search space '%s': parameter 'rollout': %s is "
			                    "not an integer from 1 to %d", o, text, HML__ROLLOUT_MAX);
			break;
		}
		if (d > *most)
			*most = (long long)d;
	}
	json_decref(bounds);
	return rc;
}

int hml__trialmap_check_rollout(const json_t *space, const char *region, const json_t *in_shape,
                                const json_t *out_shape, const char *origin)
{
	const json_t *decl = json_object_get(space, "rollout");
	const char *o = origin ? origin : "(search space)";
	long long most = 1;
	int rc;

	if (!decl)
		return 0;
	if ((rc = rollout_range(decl, o, &most)) < 0)
		return rc;
	if (most > 1 && !(in_shape && out_shape && json_equal(in_shape, out_shape))) {
		char *in = in_shape ? json_dumps(in_shape, JSON_COMPACT) : NULL;
		char *out = out_shape ? json_dumps(out_shape, JSON_COMPACT) : NULL;

		rc = hml__error_set(HML_EINVALID, "search space '%s': parameter 'rollout' needs a "
		                    "region whose output has its input's shape; region '%s' takes %s "
		                    "and gives %s", o, region ? region : "?", in ? in : "?",
		                    out ? out : "?");
		free(in);
		free(out);
	}
	return rc;
}

/* An integer parameter (a JSON integer, or an integral real) >= low, else -1 and an error. */
static int int_param(const json_t *sample, const char *key, long long low, long long *out)
{
	const json_t *v = json_object_get(sample, key);
	double d;

	if (!v)
		return 0;
	d = json_number_value(v);
	if (!json_is_number(v) || d != floor(d) || d < (double)low || d > 1e15)
		return hml__error_set(HML_EINVALID, "trial parameter '%s' must be an integer of at "
		                      "least %lld", key, low);
	*out = (long long)d;
	return 1;
}

/* A flag (residual, spatial): int_param's, and 0 or 1. */
static int flag_param(const json_t *sample, const char *key, long long *out)
{
	int rc = int_param(sample, key, 0, out);

	if (rc > 0 && *out > 1)
		return hml__error_set(HML_EINVALID, "trial parameter '%s' must be 0 or 1, not %lld",
		                      key, *out);
	return rc;
}

static int real_param(const json_t *sample, const char *key, double low, int open, double *out)
{
	const json_t *v = json_object_get(sample, key);
	double d;

	if (!v)
		return 0;
	d = json_number_value(v);
	if (!json_is_number(v) || !isfinite(d) || d < low || (open && d == low))
		return hml__error_set(HML_EINVALID, "trial parameter '%s' must be a number %s %g", key,
		                      open ? "above" : "of at least", low);
	*out = d;
	return 1;
}

/* The widths after layers / width / width_K; *n the layer count. */
static int map_widths(int64_t *w, int *n, const json_t *sample)
{
	long long v = 0;
	int rc;

	if ((rc = int_param(sample, "layers", 1, &v)) < 0)
		return rc;
	if (rc && v > HML__ARCH_MAX_LAYERS)
		return hml__error_set(HML_EINVALID, "trial parameter 'layers': %lld is more than %d",
		                      v, HML__ARCH_MAX_LAYERS);
	if (rc) {
		for (int i = *n; i < (int)v; i++)
			w[i] = *n > 0 ? w[*n - 1] : 16;
		*n = (int)v;
	}
	if ((rc = int_param(sample, "width", 1, &v)) < 0)
		return rc;
	for (int i = 0; rc && i < *n; i++)
		w[i] = v;
	for (int k = 1; k <= *n; k++) {
		char key[32];

		snprintf(key, sizeof(key), "width_%d", k);
		if ((rc = int_param(sample, key, 1, &v)) < 0)
			return rc;
		if (rc)
			w[k - 1] = v;
	}
	return 0;
}

/* The architecture fields of the sample over base `a`, as a spec. */
static int arch_spec(char *spec, size_t size, const hml__arch *a, const json_t *sample)
{
	int64_t w[HML__ARCH_MAX_LAYERS];
	int n = a->nwidths, rc;
	const json_t *act = json_object_get(sample, "activation");
	double dropout = a->dropout;
	long long kernel = a->kernel, pool = a->pool, head = a->head, residual = a->residual;
	long long spatial = a->spatial;
	size_t used;
	char num[32];

	memcpy(w, a->widths, sizeof(w));
	if ((rc = map_widths(w, &n, sample)) < 0)
		return rc;
	if (act && !json_is_string(act))
		return hml__error_set(HML_EINVALID, "trial parameter 'activation' must be a string");
	if ((rc = real_param(sample, "dropout", 0, 0, &dropout)) < 0 ||
	    (rc = int_param(sample, "kernel", 1, &kernel)) < 0 ||
	    (rc = int_param(sample, "pool", 1, &pool)) < 0 ||
	    (rc = int_param(sample, "head", 0, &head)) < 0 ||
	    (rc = flag_param(sample, "residual", &residual)) < 0 ||
	    (rc = flag_param(sample, "spatial", &spatial)) < 0)
		return rc;
	used = (size_t)snprintf(spec, size, "%s:", a->family);
	for (int i = 0; i < n && used < size; i++)
		used += (size_t)snprintf(spec + used, size - used, "%s%lld", i ? "x" : "",
		                         (long long)w[i]);
	if (used < size)
		used += (size_t)snprintf(spec + used, size - used, ":%s",
		                         act ? json_string_value(act) : a->act);
	if (dropout > 0 && used < size) {
		hml__arch_format_double(num, sizeof(num), dropout);
		used += (size_t)snprintf(spec + used, size - used, ":dropout=%s", num);
	}
	if (a->cnn && used < size)
		used += (size_t)snprintf(spec + used, size - used, ":kernel=%lld", kernel);
	if (a->vec && used < size)
		used += (size_t)snprintf(spec + used, size - used, ":pool=%lld:head=%lld", pool, head);
	if (residual && used < size)
		used += (size_t)snprintf(spec + used, size - used, ":residual");
	if (spatial && used < size)
		used += (size_t)snprintf(spec + used, size - used, ":spatial");
	if (used >= size)
		return hml__error_set(HML_EINVALID, "trial architecture is longer than %zu bytes", size);
	return 0;
}

static int map_training(hml__train_options *o, const json_t *sample)
{
	const json_t *opt = json_object_get(sample, "optimizer");
	long long v = 0;
	int rc;

	if ((rc = real_param(sample, "lr", 0, 1, &o->lr)) < 0 ||
	    (rc = real_param(sample, "weight_decay", 0, 0, &o->weight_decay)) < 0)
		return rc;
	if ((rc = int_param(sample, "batch", 1, &v)) < 0)
		return rc;
	if (rc)
		o->batch = v;
	if ((rc = int_param(sample, "epochs", 1, &v)) < 0)
		return rc;
	if (rc)
		o->epochs = v > 1000000 ? 1000000 : (int)v;
	if ((rc = int_param(sample, "rollout", 1, &v)) < 0)
		return rc;
	if (rc && v > HML__ROLLOUT_MAX)
		return hml__error_set(HML_EINVALID, "trial parameter 'rollout': %lld is more than %d",
		                      v, HML__ROLLOUT_MAX);
	if (rc)
		o->rollout = (int)v;
	if (opt && !json_is_string(opt))
		return hml__error_set(HML_EINVALID, "trial parameter 'optimizer' must be a string");
	if (opt)
		o->optimizer = json_string_value(opt);
	return 0;
}

int hml__trialmap_apply(hml__train_options *o, char *arch, size_t size, const char *family,
                        const char *base_arch, const json_t *sample)
{
	hml__arch a, b;
	char spec[512];
	size_t flen = base_arch ? strcspn(base_arch, ":") : 0;
	int rc;

	/* A base of another family (or none) gives way to the family's defaults. */
	if (!base_arch || flen != strlen(family) || strncmp(base_arch, family, flen) != 0)
		base_arch = family;
	if ((rc = hml__arch_parse(&a, base_arch)) < 0 ||
	    (rc = arch_spec(spec, sizeof(spec), &a, sample)) < 0 ||
	    (rc = hml__arch_parse(&b, spec)) < 0 ||
	    (rc = map_training(o, sample)) < 0)
		return rc;
	if (strlen(b.canonical) >= size)
		return hml__error_set(HML_EINVALID, "trial architecture '%s' is too long", b.canonical);
	memcpy(arch, b.canonical, strlen(b.canonical) + 1);
	o->arch = arch;
	return 0;
}

/* Append "--flag value"; -1 when out of memory. */
static int push_arg(json_t *argv, const char *flag, const char *value)
{
	return json_array_append_new(argv, json_string(flag)) < 0 ||
	       json_array_append_new(argv, json_string(value)) < 0 ? -1 : 0;
}

static int push_real(json_t *argv, const char *flag, double v)
{
	char num[40];

	hml__arch_format_double(num, sizeof(num), v);
	return push_arg(argv, flag, num);
}

static int push_int(json_t *argv, const char *flag, long long v)
{
	char num[32];

	snprintf(num, sizeof(num), "%lld", v);
	return push_arg(argv, flag, num);
}

json_t *hml__trialmap_train_argv(const hml__train_options *o, const char *region)
{
	json_t *argv = json_array();
	int bad = !argv || json_array_append_new(argv, json_string("train")) < 0;

	bad = bad || push_arg(argv, "--region", region) < 0 ||
	      push_arg(argv, "--arch", o->arch ? o->arch : "mlp") < 0 ||
	      push_int(argv, "--epochs", o->epochs) < 0 ||
	      push_int(argv, "--batch", (long long)o->batch) < 0 ||
	      push_real(argv, "--lr", o->lr) < 0 ||
	      (o->weight_decay >= 0 && push_real(argv, "--weight-decay", o->weight_decay) < 0) ||
	      push_arg(argv, "--optimizer", o->optimizer ? o->optimizer : "adam") < 0 ||
	      push_arg(argv, "--schedule", o->schedule ? o->schedule : "plateau") < 0 ||
	      push_arg(argv, "--loss", o->loss ? o->loss : "mse") < 0 ||
	      (o->categorical && *o->categorical &&
	       push_arg(argv, "--categorical", o->categorical) < 0) ||
	      push_int(argv, "--patience", o->patience) < 0 ||
	      (o->rollout > 1 && push_int(argv, "--rollout", o->rollout) < 0) ||
	      push_real(argv, "--clip", o->clip) < 0 ||
	      push_int(argv, "--seed", (long long)o->seed) < 0 ||
	      push_real(argv, "--val-fraction", o->val_fraction) < 0 ||
	      push_real(argv, "--test-fraction", o->test_fraction) < 0 ||
	      (o->max_seconds > 0 && push_real(argv, "--max-seconds", o->max_seconds) < 0) ||
	      (o->infer_batch > 0 && push_int(argv, "--infer-batch", (long long)o->infer_batch) < 0);
	if (bad) {
		json_decref(argv);
		hml__error_oom();
		return NULL;
	}
	return argv;
}

/* ---- the first configurations ------------------------------------------- */

/* Set `key` of `sample` to v when the sample has it (an active parameter). */
static void set_if_present(json_t *sample, const char *key, json_t *v)
{
	if (json_object_get(sample, key))
		json_object_set(sample, key, v);
	json_decref(v);
}

/* Drop every width_K of the sample; then set width_K for K <= n from w
 * (when the space has that parameter). */
static void set_widths(json_t *sample, const hml__space *space, const int64_t *w, long n)
{
	for (size_t i = 0; i < hml__space_count(space); i++) {
		const char *name = hml__space_name(space, i);
		long k = width_index(name);

		if (k >= 1 && k <= n)
			json_object_set_new(sample, name, json_integer(w[k - 1]));
		else if (k >= 1)
			json_object_del(sample, name);
	}
}

/* The base architecture and options over the centre sample `c`: the
 * widths of the layers it has, its activation, kernel, pool and head, and
 * base's learning rate, batch and rollout (base NULL: the centre's). */
static json_t *base_sample(const hml__space *space, const json_t *c, const hml__arch *a,
                           const hml__train_options *base)
{
	json_t *s = json_deep_copy(c);

	if (!s)
		return NULL;
	set_if_present(s, "layers", json_integer(a->nwidths));
	set_if_present(s, "width", json_integer(a->widths[0]));
	set_if_present(s, "activation", json_string(a->act));
	set_if_present(s, "dropout", json_real(a->dropout));
	if (base) {
		set_if_present(s, "lr", json_real(base->lr));
		set_if_present(s, "batch", json_integer(base->batch));
		set_if_present(s, "rollout", json_integer(base->rollout > 1 ? base->rollout : 1));
	}
	if (a->cnn)
		set_if_present(s, "kernel", json_integer(a->kernel));
	if (a->cnn && !a->vec)
		set_if_present(s, "residual", json_integer(a->residual));
	if (a->vec) {
		set_if_present(s, "pool", json_integer(a->pool));
		set_if_present(s, "head", json_integer(a->head));
		set_if_present(s, "spatial", json_integer(a->spatial));
	}
	set_widths(s, space, a->widths, a->nwidths);
	return s;
}

/* The smallest models over the centre sample `c`: layers, widths, kernel
 * and head as the cube's origin decodes them (each parameter's lowest). */
static json_t *smallest_sample(const hml__space *space, const json_t *c, const json_t *zero)
{
	static const char *const keys[] = { "layers", "width", "kernel", "head" };
	json_t *s = json_deep_copy(c), *layers = json_object_get(zero, "layers");
	int64_t w[HML__ARCH_MAX_LAYERS];
	long n = json_is_integer(layers) ? (long)json_integer_value(layers) : 0;

	if (!s)
		return NULL;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (json_object_get(zero, keys[i]))
			json_object_set(s, keys[i], json_object_get(zero, keys[i]));
	if (n > HML__ARCH_MAX_LAYERS)
		n = HML__ARCH_MAX_LAYERS;
	for (long k = 1; k <= n; k++) {
		char key[32];
		const json_t *v;

		snprintf(key, sizeof(key), "width_%ld", k);
		v = json_object_get(zero, key);
		w[k - 1] = json_is_integer(v) ? json_integer_value(v) : 0;
	}
	set_widths(s, space, w, n);
	for (long k = 1; k <= n; k++) {   /* the ones the origin left out */
		char key[32];

		snprintf(key, sizeof(key), "width_%ld", k);
		if (w[k - 1] == 0)
			json_object_del(s, key);
	}
	return s;
}

/* Encode sample s (released) into u: 1 when it is a point of the space. */
static int encode(double *u, const hml__space *space, json_t *s)
{
	int ok = s && hml__space_encode(u, space, s) == 0;

	json_decref(s);
	return ok;
}

size_t hml__trialmap_first(double *u, const hml__space *space, const char *family,
                           const char *base_arch, const hml__train_options *base)
{
	size_t d = hml__space_dim(space), n = 0;
	double *v = calloc(d, sizeof(*v));
	json_t *centre = NULL, *zero = NULL;
	hml__arch a;

	if (!v || hml__space_decode(&zero, space, v) < 0)
		goto done;
	for (size_t i = 0; i < d; i++)
		v[i] = 0.5;
	hml__space_project(space, v);
	if (hml__space_decode(&centre, space, v) < 0)
		goto done;
	/* The base with its training options, else with the centre's (the
	 * space may not hold the workflow's learning rate). */
	if ((base_arch || strcmp(family, "mlp") == 0) && hml__arch_parse(&a, base_arch) == 0)
		for (int with = 1; with >= 0 && n == 0; with--)
			n += encode(u, space, base_sample(space, centre, &a, with ? base : NULL));
	if (encode(u + n * d, space, smallest_sample(space, centre, zero)) &&
	    (n == 0 || memcmp(u, u + d, d * sizeof(*u)) != 0))
		n++;
done:
	json_decref(centre);
	json_decref(zero);
	free(v);
	hml_error_clear();
	return n;
}
