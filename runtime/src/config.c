#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
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

static int env_int(int *out, const char *key, const char *label, int min, int max,
                   const char *why)
{
	char name[HML__ENVNAME_MAX];
	const char *v = env_lookup(key, label, name, sizeof(name));
	int64_t x;

	if (!v)
		return 0;
	if (hml__parse_i64(v, &x) < 0 || x < min || x > max)
		return hml__error_set(HML_EINVALID,
			"invalid %s '%s': expected an integer from %d to %d%s", name, v, min, max,
			why ? why : "");
	*out = (int)x;
	return 0;
}

static int env_double(double *out, const char *key, const char *label,
                      double lo, double hi, const char *what)
{
	char name[HML__ENVNAME_MAX];
	const char *v = env_lookup(key, label, name, sizeof(name));
	double x;

	if (!v)
		return 0;
	if (hml__parse_double(v, &x) < 0 || !(x > lo && x <= hi))
		return hml__error_set(HML_EINVALID, "invalid %s '%s': expected %s",
		                      name, v, what);
	*out = x;
	return 0;
}

static int set_string(char **dst, const char *opt, const char *key,
                      const char *label, const char *fallback)
{
	char name[HML__ENVNAME_MAX];
	const char *v = opt ? opt : env_lookup(key, label, name, sizeof(name));

	if (!v)
		v = fallback;
	if (!v) {
		*dst = NULL;
		return 0;
	}
	return (*dst = hml__strdup(v)) ? 0 : HML_ENOMEM;
}

int hml__config_resolve(hml__config *c, const char *label,
                        const hml_region_options *opts)
{
	hml_region_options defaults = HML_REGION_OPTIONS_INIT;
	char name[HML__ENVNAME_MAX], why[64];
	const char *v;
	int64_t bytes;
	int rc;

	memset(c, 0, sizeof(*c));
	if (!opts)
		opts = &defaults;
	if (opts->version != HML_REGION_OPTIONS_VERSION)
		return hml__error_set(HML_EINVALID,
			"hml_region_options version %u is not supported (expected %d)",
			opts->version, HML_REGION_OPTIONS_VERSION);

	c->mode = HML_MODE_OFF;
	if (opts->mode != HML_MODE_DEFAULT) {
		if (!hml_mode_name(opts->mode))
			return hml__error_set(HML_EINVALID, "invalid mode %d in options",
			                      (int)opts->mode);
		c->mode = opts->mode;
	} else if ((v = env_lookup(HML__ENV_MODE, label, name, sizeof(name))) != NULL) {
		if (hml_mode_parse(&c->mode, v) < 0)
			return hml__error_set(HML_EINVALID,
				"unknown mode '%s' in %s (expected off, collect, infer, interleave or shadow)",
				v, name);
	}

	c->on_error = HML_ON_ERROR_FALLBACK;
	if (opts->on_error != HML_ON_ERROR_DEFAULT &&
	    opts->on_error != HML_ON_ERROR_FALLBACK && opts->on_error != HML_ON_ERROR_FAIL)
		return hml__error_set(HML_EINVALID, "invalid on_error %d in options",
		                      (int)opts->on_error);
	if (opts->on_error != HML_ON_ERROR_DEFAULT) {
		c->on_error = opts->on_error;
	} else if ((v = env_lookup(HML__ENV_ON_ERROR, label, name, sizeof(name))) != NULL) {
		if (strcmp(v, "fallback") == 0)
			c->on_error = HML_ON_ERROR_FALLBACK;
		else if (strcmp(v, "fail") == 0)
			c->on_error = HML_ON_ERROR_FAIL;
		else
			return hml__error_set(HML_EINVALID,
				"invalid %s '%s': expected fallback or fail", name, v);
	}

	c->interleave = HML__DEFAULT_INTERLEAVE;
	if (opts->interleave > 0)
		c->interleave = opts->interleave;
	else if ((rc = env_int(&c->interleave, HML__ENV_INTERLEAVE, label, 1,
	                       HML__INTERLEAVE_MAX, NULL)) < 0)
		return rc;

	c->shadow = HML__DEFAULT_SHADOW;
	if (opts->shadow > 0.0 && opts->shadow <= 1.0)
		c->shadow = opts->shadow;
	else if (opts->shadow != 0.0)
		return hml__error_set(HML_EINVALID,
			"invalid shadow fraction %g in options: expected a number in (0, 1]",
			opts->shadow);
	else if ((rc = env_double(&c->shadow, HML__ENV_SHADOW, label, 0.0, 1.0,
	                          "a fraction in (0, 1]")) < 0)
		return rc;

	/* Thousands of threads on a few cores only stall the process. */
	snprintf(why, sizeof(why), " (%d per online core)", HML__THREADS_PER_CORE);
	if (opts->threads > hml__threads_max())
		return hml__error_set(HML_EINVALID,
			"invalid threads %d in options: expected at most %d%s", opts->threads,
			hml__threads_max(), why);
	if (opts->threads > 0)
		c->threads = opts->threads;
	else if ((rc = env_int(&c->threads, HML__ENV_THREADS, label, 0, hml__threads_max(),
	                       why)) < 0)
		return rc;

	c->flush_seconds = HML__DEFAULT_FLUSH_SECONDS;
	if (opts->flush_seconds > 0.0)
		c->flush_seconds = opts->flush_seconds;
	else if ((rc = env_double(&c->flush_seconds, HML__ENV_FLUSH_SECONDS, label, 0.0,
	                          1e9, "a positive number of seconds")) < 0)
		return rc;

	c->flush_bytes = HML__DEFAULT_FLUSH_BYTES;
	if (opts->flush_bytes > 0) {
		c->flush_bytes = opts->flush_bytes;
	} else if ((v = env_lookup(HML__ENV_FLUSH_BYTES, label, name, sizeof(name))) != NULL) {
		if (hml__parse_i64(v, &bytes) < 0 || bytes <= 0)
			return hml__error_set(HML_EINVALID,
				"invalid %s '%s': expected a positive number of bytes", name, v);
		c->flush_bytes = (size_t)bytes;
	}

	if ((rc = set_string(&c->model, opts->model, HML__ENV_MODEL, label, NULL)) < 0 ||
	    (rc = set_string(&c->db, opts->db, HML__ENV_DB, label, HML__DEFAULT_DB)) < 0 ||
	    (rc = set_string(&c->profile, opts->profile, HML__ENV_PROFILE, label, NULL)) < 0)
		goto fail;
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
	c->model = c->db = c->profile = NULL;
}

int hml_region_options_init(hml_region_options *opts, unsigned int version)
{
	hml_region_options init = HML_REGION_OPTIONS_INIT;

	if (!opts)
		return hml__error_set(HML_EINVALID, "options pointer is NULL");
	if (version != HML_REGION_OPTIONS_VERSION)
		return hml__error_set(HML_EINVALID,
			"hml_region_options version %u is not supported (expected %d)",
			version, HML_REGION_OPTIONS_VERSION);
	*opts = init;
	return 0;
}
