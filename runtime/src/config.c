#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "core/conserve.h"
#include "core/envname.h"
#include "core/error.h"
#include "core/util.h"

#define LABEL_MAX 64

static const char *const mode_names[] = {
	[HML_MODE_OFF] = "off",
	[HML_MODE_COLLECT] = "collect",
	[HML_MODE_INFER] = "infer",
	[HML_MODE_INTERLEAVE] = "interleave",
	[HML_MODE_SHADOW] = "shadow",
};

const char *hml_mode_name(hml_mode mode)
{
	if (mode < HML_MODE_OFF || mode > HML_MODE_SHADOW)
		return NULL;
	return mode_names[mode];
}

int hml_mode_parse(hml_mode *out, const char *name)
{
	int m;

	for (m = HML_MODE_OFF; m <= HML_MODE_SHADOW; m++) {
		if (name && strcmp(name, mode_names[m]) == 0) {
			*out = (hml_mode)m;
			return 0;
		}
	}
	return hml__error_set(HML_EINVALID,
		"unknown mode '%s' (expected off, collect, infer, interleave or shadow)",
		name ? name : "(null)");
}

int hml__label_check(const char *label)
{
	size_t i, n;

	if (!label || !*label)
		return hml__error_set(HML_EINVALID, "a region needs a non-empty label");
	n = strlen(label);
	if (n > LABEL_MAX)
		return hml__error_set(HML_EINVALID,
			"region label '%.64s...' is longer than %d characters", label, LABEL_MAX);
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)label[i];
		if (!isalnum(c) && c != '_' && c != '-' && c != '.')
			return hml__error_set(HML_EINVALID,
				"region label '%s' has character '%c': use letters, digits, '_', '-' and '.'",
				label, c);
	}
	return 0;
}

/*
 * Look a setting up in the environment: the per-region variable first
 * (HML_<KEY>_<LABEL>), so one region can infer while another collects,
 * then the global one. `name` receives the variable that was found, for
 * error messages.
 */
static const char *env_lookup(const char *var, const char *label,
                              char *name, size_t size)
{
	const char *v;

	if (hml__envname_region(name, size, var, label) == 0 &&
	    (v = getenv(name)) != NULL && *v)
		return v;
	snprintf(name, size, "%s", var);
	v = getenv(name);
	return (v && *v) ? v : NULL;
}

/*
 * The settings, in the order they are resolved (the first bad one is the
 * one reported). Each comes from its field of hml_region_options when that
 * is set, else from its variable, else from its default, which is read as
 * the variable would be. What "set" means and how the text is read depend
 * on the kind:
 *
 *   MODE, ON_ERROR  the option's *_DEFAULT is unset, a value outside the
 *                   enum an error; the text a name
 *   INT             an option <= 0 is unset, one above `hi` an error if
 *                   `checked`; the text an integer in [lo, hi]
 *   REAL            an option above `lo` is set; if `checked`, one in
 *                   (lo, hi] is, 0 is unset and anything else an error;
 *                   the text a number in (lo, hi]
 *   BYTES           an option 0 is unset; the text an integer > 0
 *   STRING          an option NULL is unset; the text anything
 *
 * A setting with no option (NO_OPTION) is read from the environment only.
 */
typedef enum kind { MODE, ON_ERROR, INT, REAL, BYTES, STRING } kind;

typedef struct setting {
	const char *key;       /* HML_<KEY>_<LABEL>, else HML_<KEY> */
	const char *name;      /* the option, in messages */
	kind kind;
	size_t field, option;  /* offsets in hml__config and in hml_region_options */
	const char *def;       /* the default (NULL: none) */
	const char *expect;    /* REAL, BYTES: what the text must be; INT: why the
	                          bound is what it is (or NULL) */
	double lo, hi;         /* INT, REAL: the range; hi < 0: hml__threads_max() */
	int checked;           /* the option's range is checked, not only its sign */
} setting;

#define CFG(f) offsetof(hml__config, f)
#define NO_OPTION ((size_t)-1)   /* a setting of the environment only */
#define OPT(f) offsetof(hml_region_options, f)
#define STR_(x) #x
#define STR(x) STR_(x)

static const setting settings[] = {
	{ HML__ENV_MODE, "mode", MODE, CFG(mode), OPT(mode), "off", NULL, 0, 0, 1 },
	{ HML__ENV_ON_ERROR, "on_error", ON_ERROR, CFG(on_error), OPT(on_error), "fallback",
	  NULL, 0, 0, 1 },
	{ HML__ENV_INTERLEAVE, "interleave", INT, CFG(interleave), OPT(interleave), "4",
	  NULL, 1, HML__INTERLEAVE_MAX, 0 },
	{ HML__ENV_SHADOW, "shadow fraction", REAL, CFG(shadow), OPT(shadow), "0.1",
	  "a fraction in (0, 1]", 0, 1, 1 },
	/* Thousands of threads on a few cores only stall the process. */
	{ HML__ENV_THREADS, "threads", INT, CFG(threads), OPT(threads), "0",
	  " (" STR(HML__THREADS_PER_CORE) " per online core)", 0, -1, 1 },
	{ HML__ENV_FLUSH_SECONDS, "flush_seconds", REAL, CFG(flush_seconds), OPT(flush_seconds),
	  "1", "a positive number of seconds", 0, 1e9, 0 },
	{ HML__ENV_FLUSH_BYTES, "flush_bytes", BYTES, CFG(flush_bytes), OPT(flush_bytes),
	  "16777216" /* 16 MiB */, "a positive number of bytes", 0, 0, 0 },
	{ HML__ENV_COLLECT_RATE, "collect rate", REAL, CFG(collect_rate), NO_OPTION, "1",
	  "a fraction in (0, 1]", 0, 1, 1 },
	{ HML__ENV_COLLECT_RESERVOIR, "collect reservoir", INT, CFG(collect_reservoir),
	  NO_OPTION, NULL, " rows", 1, HML__RESERVOIR_MAX, 1 },
	{ HML__ENV_COLLECT_DEDUP, "collect dedup", INT, CFG(collect_dedup), NO_OPTION, "0",
	  NULL, 0, 1, 1 },
	{ HML__ENV_COLLECT_SEED, "collect seed", INT, CFG(collect_seed), NO_OPTION, "0",
	  NULL, 0, 2147483647, 1 },
	{ HML__ENV_COLLECT_COMPRESSION, "collect compression", STRING,
	  CFG(collect_compression), NO_OPTION, NULL, NULL, 0, 0, 0 },
	{ HML__ENV_MODEL, "model", STRING, CFG(model), OPT(model), NULL, NULL, 0, 0, 0 },
	{ HML__ENV_DB, "db", STRING, CFG(db), OPT(db), "hml-data.h5", NULL, 0, 0, 0 },
	{ HML__ENV_PROFILE, "profile", STRING, CFG(profile), OPT(profile), NULL, NULL, 0, 0, 0 },
	{ HML__ENV_GUARD, "guard", STRING, CFG(guard), OPT(guard), NULL, NULL, 0, 0, 0 },
	/* Guarded collection: infer and interleave store their guarded rows. */
	{ HML__ENV_COLLECT_GUARDED, "collect guarded", INT, CFG(collect_guarded), NO_OPTION, "0",
	  " (1: store the guarded rows in HML_DB)", 0, 1, 0 },
	/* Hot swap (swap.h): a day between looks at most. */
	{ HML__ENV_DEPLOYMENT, "deployment", STRING, CFG(deployment), NO_OPTION, NULL, NULL, 0, 0, 0 },
	{ HML__ENV_SWAP_INTERVAL, "swap interval", INT, CFG(swap_interval), NO_OPTION, "500",
	  " milliseconds", 1, 86400000, 0 },
	/* The sum the model's output conserves (region_conserve.c). */
	{ HML__ENV_CONSERVE, "conserve", STRING, CFG(conserve), NO_OPTION, NULL, NULL, 0, 0, 0 },
};

#define OPTION(o, s, type) (*(const type *)((const char *)(o) + (s)->option))

static double setting_hi(const setting *s)
{
	return s->hi < 0 ? (double)hml__threads_max() : s->hi;
}

/* The setting's field of `o`: 1 when it is set (and stored in c), 0 when
 * it is not, negative when it is bad. */
static int from_option(hml__config *c, const setting *s, const hml_region_options *o)
{
	void *dst = (char *)c + s->field;
	double hi = setting_hi(s);

	if (s->option == NO_OPTION)
		return 0;
	switch (s->kind) {
	case MODE: {
		hml_mode m = OPTION(o, s, hml_mode);
		if (m == HML_MODE_DEFAULT)
			return 0;
		if (!hml_mode_name(m))
			return hml__error_set(HML_EINVALID, "invalid %s %d in options", s->name, (int)m);
		*(hml_mode *)dst = m;
		return 1;
	}
	case ON_ERROR: {
		hml_on_error e = OPTION(o, s, hml_on_error);
		if (e == HML_ON_ERROR_DEFAULT)
			return 0;
		if (e != HML_ON_ERROR_FALLBACK && e != HML_ON_ERROR_FAIL)
			return hml__error_set(HML_EINVALID, "invalid %s %d in options", s->name, (int)e);
		*(hml_on_error *)dst = e;
		return 1;
	}
	case INT: {
		int v = OPTION(o, s, int);
		if (s->checked && v > hi)
			return hml__error_set(HML_EINVALID,
				"invalid %s %d in options: expected at most %d%s", s->name, v, (int)hi,
				s->expect ? s->expect : "");
		if (v <= 0)
			return 0;
		*(int *)dst = v;
		return 1;
	}
	case REAL: {
		double v = OPTION(o, s, double);
		if (v > s->lo && (v <= hi || !s->checked)) {
			*(double *)dst = v;
			return 1;
		}
		if (s->checked && v != 0.0)
			return hml__error_set(HML_EINVALID,
				"invalid %s %g in options: expected a number in (%g, %g]", s->name, v,
				s->lo, hi);
		return 0;
	}
	case BYTES:
		if (OPTION(o, s, size_t) == 0)
			return 0;
		*(size_t *)dst = OPTION(o, s, size_t);
		return 1;
	case STRING:
		if (!OPTION(o, s, const char *))
			return 0;
		return (*(char **)dst = hml__strdup(OPTION(o, s, const char *))) ? 1 : HML_ENOMEM;
	}
	return 0;
}

/* Text `v` (of variable `name`, or the default) into c; negative when it
 * is bad. */
static int from_text(hml__config *c, const setting *s, const char *name, const char *v)
{
	void *dst = (char *)c + s->field;
	double hi = setting_hi(s), x;
	int64_t i;

	switch (s->kind) {
	case MODE:
		if (hml_mode_parse(dst, v) < 0)
			return hml__error_set(HML_EINVALID,
				"unknown mode '%s' in %s (expected off, collect, infer, interleave or shadow)",
				v, name);
		return 0;
	case ON_ERROR:
		if (strcmp(v, "fallback") == 0)
			*(hml_on_error *)dst = HML_ON_ERROR_FALLBACK;
		else if (strcmp(v, "fail") == 0)
			*(hml_on_error *)dst = HML_ON_ERROR_FAIL;
		else
			return hml__error_set(HML_EINVALID,
				"invalid %s '%s': expected fallback or fail", name, v);
		return 0;
	case INT:
		if (hml__parse_i64(v, &i) < 0 || i < s->lo || i > hi)
			return hml__error_set(HML_EINVALID,
				"invalid %s '%s': expected an integer from %d to %d%s", name, v,
				(int)s->lo, (int)hi, s->expect ? s->expect : "");
		*(int *)dst = (int)i;
		return 0;
	case REAL:
		if (hml__parse_double(v, &x) < 0 || !(x > s->lo && x <= hi))
			return hml__error_set(HML_EINVALID, "invalid %s '%s': expected %s",
			                      name, v, s->expect);
		*(double *)dst = x;
		return 0;
	case BYTES:
		if (hml__parse_i64(v, &i) < 0 || i <= 0)
			return hml__error_set(HML_EINVALID, "invalid %s '%s': expected %s",
			                      name, v, s->expect);
		*(size_t *)dst = (size_t)i;
		return 0;
	case STRING:
		return (*(char **)dst = hml__strdup(v)) ? 0 : HML_ENOMEM;
	}
	return 0;
}

/* HML_DEVICE's spelling is checked with the other settings, whatever
 * HML_ON_ERROR says: a misspelt value is the caller's mistake, not a model
 * failure to fall back from. Whether the device is there (cuda on a
 * machine or build without one) is the model's, decided when it loads. */
static int device_check(void)
{
	const char *v = getenv(HML__ENV_DEVICE);

	if (hml__device_known(v))
		return 0;
	return hml__error_set(HML_EINVALID, "%s='%.64s' is not auto, cpu or cuda",
	                      HML__ENV_DEVICE, v);
}

int hml__config_resolve(hml__config *c, const char *label,
                        const hml_region_options *opts)
{
	hml_region_options defaults = HML_REGION_OPTIONS_INIT, v1;
	char name[HML__ENVNAME_MAX];
	hml__conserve spec;
	const char *v;
	size_t i;
	int rc;

	memset(c, 0, sizeof(*c));
	if (!opts)
		opts = &defaults;
	if (opts->version == 1) {   /* the layout before `guard`: read no further */
		memcpy(&v1, opts, offsetof(hml_region_options, guard));
		v1.guard = NULL;
		opts = &v1;
	} else if (opts->version != HML_REGION_OPTIONS_VERSION) {
		return hml__error_set(HML_EINVALID,
			"hml_region_options version %u is not supported (expected 1 or %d)",
			opts->version, HML_REGION_OPTIONS_VERSION);
	}

	for (i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
		const setting *s = &settings[i];

		if ((rc = from_option(c, s, opts)) < 0)
			goto fail;
		if (rc > 0)
			continue;
		if ((v = env_lookup(s->key, label, name, sizeof(name))) != NULL)
			rc = from_text(c, s, name, v);
		else if (s->def)
			rc = from_text(c, s, s->key, s->def);
		if (rc < 0)
			goto fail;
	}
	/* A profile "0" is none (HML_PROFILE=0 for one region, say). */
	if (c->profile && strcmp(c->profile, "0") == 0) {
		free(c->profile);
		c->profile = NULL;
	}

	if ((c->mode == HML_MODE_INFER || c->mode == HML_MODE_INTERLEAVE ||
	     c->mode == HML_MODE_SHADOW) && !c->model) {
		rc = hml__error_set(HML_EINVALID,
			"region '%s': mode '%s' needs a model: set HML_MODEL or options.model",
			label, hml_mode_name(c->mode));
		goto fail;
	}
	if (c->mode != HML_MODE_OFF && c->mode != HML_MODE_COLLECT && (rc = device_check()) < 0)
		goto fail;
	if (c->conserve && (rc = hml__conserve_parse(&spec, c->conserve)) < 0)
		goto fail;
	return 0;

fail:
	hml__config_release(c);
	return rc;
}

void hml__config_release(hml__config *c)
{
	if (!c)
		return;
	free(c->model);
	free(c->db);
	free(c->profile);
	free(c->guard);
	free(c->deployment);
	free(c->collect_compression);
	free(c->conserve);
	c->model = c->db = c->profile = c->guard = c->deployment = c->collect_compression = NULL;
	c->conserve = NULL;
}

int hml_region_options_init(hml_region_options *opts, unsigned int version)
{
	hml_region_options init = HML_REGION_OPTIONS_INIT;

	if (!opts)
		return hml__error_set(HML_EINVALID, "options pointer is NULL");
	if (version == 1) {   /* a caller built against the layout before `guard` */
		init.version = 1;
		memcpy(opts, &init, offsetof(hml_region_options, guard));
		return 0;
	}
	if (version != HML_REGION_OPTIONS_VERSION)
		return hml__error_set(HML_EINVALID,
			"hml_region_options version %u is not supported (expected 1 or %d)",
			version, HML_REGION_OPTIONS_VERSION);
	*opts = init;
	return 0;
}
