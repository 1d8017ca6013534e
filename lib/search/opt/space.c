/*
 * lib/search/opt/space.c - search spaces: parsing, and the unit-cube encoding the
 * optimiser works in. The format and the encoding are described in space.h.
 */
#include "search/opt/space.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/read_file.h"
#include "core/util.h"

enum { P_INT, P_FLOAT, P_CHOICE };

typedef struct param {
	char *name;
	int type;
	int log;
	double low, high;     /* int and float */
	json_t *values;       /* choice: the array (owned reference) */
	size_t nvalues;
	int onehot;           /* choice of strings */
	size_t offset, width; /* coordinates in the unit cube */
	long parent;          /* index of the parent, or -1 */
	double cmin, cmax;    /* condition on a numeric parent */
	json_t *cvalues;      /* or on the parent's value (owned), or NULL */
} param;

struct hml__space {
	param *p;
	size_t n, dim;
};

/* A value of one parameter once decoded: the number, or the choice index. */
typedef struct { double v; int active; } value;

static int bad(const char *origin, const char *fmt, ...) HML__PRINTF(2, 3);
static int bad(const char *origin, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (origin)
		return hml__error_set(HML_EINVALID, "search space '%s': %s", origin, msg);
	return hml__error_set(HML_EINVALID, "search space: %s", msg);
}

static long find_param(const hml__space *s, size_t upto, const char *name)
{
	for (size_t i = 0; i < upto; i++)
		if (!strcmp(s->p[i].name, name))
			return (long)i;
	return -1;
}

static int check_keys(const json_t *obj, const char *path, const char *const *allowed,
                      const char *origin)
{
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)obj, key, v) {
		size_t i = 0;
		while (allowed[i] && strcmp(allowed[i], key))
			i++;
		if (!allowed[i])
			return bad(origin, "unknown key '%s.%s'", path, key);
	}
	return 0;
}

static int get_number(const json_t *obj, const char *name, const char *key,
                      double *out, const char *origin)
{
	json_t *v = json_object_get(obj, key);
	if (!v)
		return bad(origin, "key '%s.%s' is missing", name, key);
	if (!json_is_number(v) || !isfinite(json_number_value(v)))
		return bad(origin, "key '%s.%s' must be a number", name, key);
	*out = json_number_value(v);
	return 0;
}

#define INT_BOUND 9007199254740992.0   /* 2^53 */

static int parse_range(param *p, const json_t *spec, const char *origin)
{
	int rc;
	json_t *log = json_object_get(spec, "log");
	if ((rc = get_number(spec, p->name, "low", &p->low, origin)) < 0 ||
	    (rc = get_number(spec, p->name, "high", &p->high, origin)) < 0)
		return rc;
	if (log && !json_is_boolean(log))
		return bad(origin, "key '%s.log' must be true or false", p->name);
	p->log = log && json_is_true(log);
	if (p->type == P_INT && (p->low != floor(p->low) || p->high != floor(p->high)))
		return bad(origin, "key '%s': low and high of an int must be integers", p->name);
	/* Beyond 2^53 doubles skip integers, and decoding converts to int64. */
	if (p->type == P_INT && (fabs(p->low) > INT_BOUND || fabs(p->high) > INT_BOUND))
		return bad(origin, "key '%s': low and high of an int must be within +-2^53",
		           p->name);
	if (p->low > p->high)
		return bad(origin, "key '%s': low %g is greater than high %g", p->name,
		           p->low, p->high);
	if (p->log && p->low <= 0)
		return bad(origin, "key '%s': a log scale needs low > 0", p->name);
	p->width = 1;
	return 0;
}

/* Two choice values are one when equal as JSON or as numbers (0 and 0.0):
 * a sample's value finds its index by this rule (sample_value). */
static int same_value(const json_t *a, const json_t *b)
{
	return json_equal(a, b) || (json_is_number(a) && json_is_number(b) &&
	                            json_number_value(a) == json_number_value(b));
}

static int parse_values(param *p, const json_t *spec, const char *origin)
{
	json_t *vals = json_object_get(spec, "values");
	size_t nstr = 0;
	if (!vals)
		return bad(origin, "key '%s.values' is missing", p->name);
	if (!json_is_array(vals))
		return bad(origin, "key '%s.values' must be an array", p->name);
	p->nvalues = json_array_size(vals);
	if (p->nvalues == 0)
		return bad(origin, "key '%s.values' is empty", p->name);
	for (size_t i = 0; i < p->nvalues; i++) {
		json_t *a = json_array_get(vals, i);
		if (json_is_string(a))
			nstr++;
		else if (!json_is_number(a))
			return bad(origin, "key '%s.values[%zu]' must be a string or a number",
			           p->name, i);
		for (size_t j = 0; j < i; j++)
			if (same_value(a, json_array_get(vals, j)))
				return bad(origin, "key '%s.values[%zu]' repeats an earlier value",
				           p->name, i);
	}
	if (nstr && nstr != p->nvalues)
		return bad(origin, "key '%s.values' mixes strings and numbers", p->name);
	p->onehot = nstr > 0;
	p->width = p->onehot ? p->nvalues : 1;
	p->values = json_incref(vals);
	return 0;
}

static int parse_when(hml__space *s, size_t idx, const json_t *when, const json_t *root,
                      const char *origin)
{
	static const char *const keys[] = { "parent", "min", "max", "values", NULL };
	param *p = &s->p[idx];
	json_t *par = json_object_get(when, "parent"), *vals = json_object_get(when, "values");
	int rc, has_min = json_object_get(when, "min") != NULL;
	int has_max = json_object_get(when, "max") != NULL;
	char path[300];
	snprintf(path, sizeof path, "%s.when", p->name);
	if (!json_is_object(when))
		return bad(origin, "key '%s' must be an object", path);
	if ((rc = check_keys(when, path, keys, origin)) < 0)
		return rc;
	if (!json_is_string(par))
		return bad(origin, "key '%s.parent' must be a parameter name", path);
	p->parent = find_param(s, idx, json_string_value(par));
	if (p->parent < 0)
		return bad(origin, "key '%s.parent': %s parent '%s'", path,
		           json_object_get(root, json_string_value(par)) ?
		           "later-declared" : "unknown", json_string_value(par));
	const param *q = &s->p[p->parent];
	if (!!vals == (has_min || has_max))
		return bad(origin, "key '%s' needs either 'values' or 'min'/'max'", path);
	if (vals) {
		if (!json_is_array(vals) || json_array_size(vals) == 0)
			return bad(origin, "key '%s.values' must be a non-empty array", path);
		p->cvalues = json_incref(vals);
		return 0;
	}
	if (q->type == P_CHOICE && q->onehot)
		return bad(origin, "key '%s': parent '%s' has string values: use 'values'",
		           path, q->name);
	p->cmin = -INFINITY;
	p->cmax = INFINITY;
	if ((has_min && (rc = get_number(when, path, "min", &p->cmin, origin)) < 0) ||
	    (has_max && (rc = get_number(when, path, "max", &p->cmax, origin)) < 0))
		return rc;
	return 0;
}

static int parse_param(hml__space *s, size_t idx, const char *name, const json_t *spec,
                       const json_t *root, const char *origin)
{
	static const char *const keys[] = { "type", "low", "high", "log", "values", "when",
	                                    NULL };
	param *p = &s->p[idx];
	int rc;
	p->parent = -1;
	if (!(p->name = hml__strdup(name)))
		return HML_ENOMEM;
	if (!*name || strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                           "0123456789_") != strlen(name))
		return bad(origin, "invalid parameter name '%s' (letters, digits and '_')", name);
	if (!json_is_object(spec))
		return bad(origin, "key '%s' must be an object", name);
	if ((rc = check_keys(spec, name, keys, origin)) < 0)
		return rc;
	json_t *type = json_object_get(spec, "type");
	if (!type)
		return bad(origin, "key '%s.type' is missing", name);
	const char *t = json_is_string(type) ? json_string_value(type) : "";
	if (!strcmp(t, "int"))
		p->type = P_INT;
	else if (!strcmp(t, "float"))
		p->type = P_FLOAT;
	else if (!strcmp(t, "choice"))
		p->type = P_CHOICE;
	else
		return bad(origin, "key '%s.type': unknown type '%s' (expected int, float or "
		           "choice)", name, json_is_string(type) ? t : "(not a string)");
	if (p->type == P_CHOICE) {
		if (json_object_get(spec, "low") || json_object_get(spec, "high") ||
		    json_object_get(spec, "log"))
			return bad(origin, "key '%s': a choice takes 'values', not low/high/log", name);
		rc = parse_values(p, spec, origin);
	} else {
		if (json_object_get(spec, "values"))
			return bad(origin, "key '%s': an %s takes low/high, not 'values'", name, t);
		rc = parse_range(p, spec, origin);
	}
	if (rc < 0)
		return rc;
	json_t *when = json_object_get(spec, "when");
	return when ? parse_when(s, idx, when, root, origin) : 0;
}

int hml__space_parse(hml__space **out, const json_t *spec, const char *origin)
{
	int rc = 0;
	hml__space *s = NULL;
	const char *key;
	json_t *v;
	*out = NULL;
	if (!json_is_object(spec))
		return bad(origin, "must be an object of parameters");
	if (json_object_size(spec) == 0)
		return bad(origin, "no parameters");
	if (!(s = calloc(1, sizeof *s)) ||
	    !(s->p = calloc(json_object_size(spec), sizeof *s->p))) {
		rc = hml__error_oom();
		goto done;
	}
	json_object_foreach((json_t *)spec, key, v) {
		/* count first so that free() sees every allocated name */
		s->n++;
		if ((rc = parse_param(s, s->n - 1, key, v, spec, origin)) < 0)
			goto done;
		s->p[s->n - 1].offset = s->dim;
		s->dim += s->p[s->n - 1].width;
	}
	*out = s;
	s = NULL;
done:
	hml__space_free(s);
	return rc;
}

int hml__space_read(json_t **out, const char *path)
{
	json_error_t err;
	hml__error_saved why;
	char *text;
	size_t len;
	json_t *doc, *inner;

	*out = NULL;
	/* Bounded, and never a FIFO (lib/core/read_file.h). */
	if (hml__read_file(path, &text, &len) < 0) {
		hml__error_save(&why);
		return hml__error_set(HML_EIO, "cannot read search space '%s': %s", path,
		                      hml__read_file_reason(why.message, path));
	}
	doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
	free(text);
	if (!doc)
		return hml__error_set(HML_EINVALID, "search space '%s': invalid JSON: %s "
		                      "(line %d, column %d)", path, err.text, err.line, err.column);
	inner = json_object_get(doc, "search_space");
	*out = json_incref(json_is_object(inner) ? inner : doc);
	json_decref(doc);
	return 0;
}

int hml__space_load(hml__space **out, const char *path)
{
	json_t *spec;
	int rc;

	*out = NULL;
	if ((rc = hml__space_read(&spec, path)) < 0)
		return rc;
	rc = hml__space_parse(out, spec, path);
	json_decref(spec);
	return rc;
}

void hml__space_free(hml__space *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->p[i].name);
		json_decref(s->p[i].values);
		json_decref(s->p[i].cvalues);
	}
	free(s->p);
	free(s);
}

size_t hml__space_dim(const hml__space *s) { return s->dim; }
size_t hml__space_count(const hml__space *s) { return s->n; }
const char *hml__space_name(const hml__space *s, size_t i) { return s->p[i].name; }

static double clamp01(double u)
{
	return u > 1 ? 1 : u >= 0 ? u : 0; /* NaN -> 0 */
}

/* The ends of the encoded interval: an int owns +-0.5 around each value. */
static void range_ends(const param *p, double *a, double *b)
{
	double pad = p->type == P_INT ? 0.5 : 0.0;
	if (p->log) {
		*a = log(p->type == P_INT ? fmax(p->low - pad, 0.5 * p->low) : p->low);
		*b = log(p->high + pad);
	} else {
		*a = p->low - pad;
		*b = p->high + pad;
	}
}

static double decode_one(const param *p, const double *u)
{
	if (p->type == P_CHOICE) {
		if (!p->onehot)
			return fmin(floor(clamp01(u[0]) * (double)p->nvalues), (double)p->nvalues - 1);
		size_t best = 0;
		for (size_t k = 1; k < p->nvalues; k++)
			if (clamp01(u[k]) > clamp01(u[best]))
				best = k;
		return (double)best;
	}
	double a, b;
	range_ends(p, &a, &b);
	double x = a + clamp01(u[0]) * (b - a);
	if (p->log)
		x = exp(x);
	if (p->type == P_INT)
		x = round(x);
	return fmin(fmax(x, p->low), p->high);
}

static void encode_one(const param *p, double v, double *u)
{
	if (p->type == P_CHOICE) {
		if (!p->onehot) {
			u[0] = (v + 0.5) / (double)p->nvalues;
		} else {
			for (size_t k = 0; k < p->nvalues; k++)
				u[k] = (double)k == v ? 1.0 : 0.0;
		}
		return;
	}
	double a, b;
	range_ends(p, &a, &b);
	double x = p->log ? log(v) : v;
	u[0] = b > a ? clamp01((x - a) / (b - a)) : 0.5;
}

/* The number a parent's value stands for in a min/max condition. */
static double numeric(const param *q, double v)
{
	if (q->type != P_CHOICE)
		return v;
	return json_number_value(json_array_get(q->values, (size_t)v));
}

static json_t *value_json(const param *q, double v)
{
	if (q->type == P_CHOICE)
		return json_array_get(q->values, (size_t)v); /* borrowed */
	return NULL;
}

static int condition_holds(const hml__space *s, const param *p, const value *val)
{
	if (p->parent < 0)
		return 1;
	const param *q = &s->p[p->parent];
	if (!val[p->parent].active)
		return 0;
	double v = val[p->parent].v;
	if (p->cvalues) {
		json_t *mine = value_json(q, v), *c;
		size_t i;
		json_array_foreach(p->cvalues, i, c) {
			if (mine ? json_equal(mine, c) :
			    json_is_number(c) && json_number_value(c) == v)
				return 1;
		}
		return 0;
	}
	double x = numeric(q, v);
	return x >= p->cmin && x <= p->cmax;
}

static void decode_values(const hml__space *s, const double *u, value *val)
{
	for (size_t i = 0; i < s->n; i++) {
		const param *p = &s->p[i];
		val[i].active = condition_holds(s, p, val);
		val[i].v = decode_one(p, u + p->offset);
	}
}

static void encode_values(const hml__space *s, const value *val, double *u)
{
	for (size_t i = 0; i < s->n; i++) {
		const param *p = &s->p[i];
		if (val[i].active)
			encode_one(p, val[i].v, u + p->offset);
		else
			memset(u + p->offset, 0, p->width * sizeof *u);
	}
}

void hml__space_project(const hml__space *s, double *u)
{
	value small[64], *val = s->n <= 64 ? small : malloc(s->n * sizeof *val);
	if (!val) { /* cannot snap without memory: at least clamp */
		for (size_t k = 0; k < s->dim; k++)
			u[k] = clamp01(u[k]);
		return;
	}
	decode_values(s, u, val);
	encode_values(s, val, u);
	if (val != small)
		free(val);
}

int hml__space_decode(json_t **out, const hml__space *s, const double *u)
{
	int rc = 0;
	value *val = malloc((s->n ? s->n : 1) * sizeof *val);
	json_t *obj = json_object();
	*out = NULL;
	if (!val || !obj) {
		rc = hml__error_oom();
		goto done;
	}
	decode_values(s, u, val);
	for (size_t i = 0; i < s->n; i++) {
		const param *p = &s->p[i];
		if (!val[i].active)
			continue;
		json_t *j = p->type == P_INT ? json_integer((json_int_t)val[i].v) :
		            p->type == P_FLOAT ? json_real(val[i].v) :
		            json_incref(json_array_get(p->values, (size_t)val[i].v));
		if (!j || json_object_set_new(obj, p->name, j) < 0) {
			rc = hml__error_oom();
			goto done;
		}
	}
	*out = obj;
	obj = NULL;
done:
	json_decref(obj);
	free(val);
	return rc;
}

/* The value of parameter p in a sample: the number, or the choice index. */
static int sample_value(const param *p, const json_t *j, double *out)
{
	if (p->type == P_CHOICE) {
		for (size_t k = 0; k < p->nvalues; k++) {
			json_t *c = json_array_get(p->values, k);
			if (same_value(c, j)) {
				*out = (double)k;
				return 0;
			}
		}
		char *txt = json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT);
		int rc = hml__error_set(HML_EINVALID, "sample: key '%s': %s is not one of the "
		                        "values", p->name, txt ? txt : "the value");
		free(txt);
		return rc;
	}
	if (!json_is_number(j))
		return hml__error_set(HML_EINVALID, "sample: key '%s' must be a number", p->name);
	double x = json_number_value(j);
	if (p->type == P_INT && x != floor(x))
		return hml__error_set(HML_EINVALID, "sample: key '%s' must be an integer", p->name);
	if (!(x >= p->low && x <= p->high))
		return hml__error_set(HML_EINVALID, "sample: key '%s': %g is out of range "
		                      "[%g, %g]", p->name, x, p->low, p->high);
	*out = x;
	return 0;
}

int hml__space_encode(double *u, const hml__space *s, const json_t *sample)
{
	int rc = 0;
	value *val = malloc((s->n ? s->n : 1) * sizeof *val);
	const char *key;
	json_t *j;
	if (!val)
		return hml__error_oom();
	if (!json_is_object(sample)) {
		rc = hml__error_set(HML_EINVALID, "sample: must be an object");
		goto done;
	}
	json_object_foreach((json_t *)sample, key, j) {
		if (find_param(s, s->n, key) < 0) {
			rc = hml__error_set(HML_EINVALID, "sample: unknown key '%s'", key);
			goto done;
		}
	}
	for (size_t i = 0; i < s->n; i++) {
		const param *p = &s->p[i];
		j = json_object_get(sample, p->name);
		val[i].active = condition_holds(s, p, val);
		val[i].v = 0;
		if (val[i].active && !j) {
			rc = hml__error_set(HML_EINVALID, "sample: key '%s' is missing", p->name);
			goto done;
		}
		if (!val[i].active && j) {
			rc = hml__error_set(HML_EINVALID, "sample: key '%s' is set but inactive",
			                    p->name);
			goto done;
		}
		if (j && (rc = sample_value(p, j, &val[i].v)) < 0)
			goto done;
	}
	encode_values(s, val, u);
done:
	free(val);
	return rc;
}
