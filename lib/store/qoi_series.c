/*
 * lib/store/qoi_series.c - a QoI over time compared record by record.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/beneath.h"
#include "core/error.h"
#include "core/json.h"
#include "core/qoi_file.h"
#include "store/qoi_series.h"
#include "sys/gnuplot.h"

void hml__qoi_series_free(hml__qoi_series *s, size_t n)
{
	for (size_t i = 0; s && i < n; i++) {
		free(s[i].steps);
		free(s[i].err);
		free(s[i].error);
		free(s[i].rel_l2);
	}
	free(s);
}

static double rel_l2(const double *a, const double *b, size_t n)
{
	double num = 0, den = 0;

	for (size_t k = 0; k < n; k++)
		if (isfinite(a[k]) && isfinite(b[k])) {
			num += (b[k] - a[k]) * (b[k] - a[k]);
			den += a[k] * a[k];
		}
	return den > 0 ? sqrt(num / den) : NAN;
}

/* The steps of the surrogate's run must be the reference's. */
static int same_steps(const hml__workflow_qoi *q, const int64_t *a, size_t na,
                      const int64_t *b, size_t nb, const char *what)
{
	if (na != nb)
		return hml__error_set(HML_ESHAPE, "quantity of interest '%s' was recorded at %zu "
		                      "steps in the accurate run but %zu with %s", q->dataset, na,
		                      nb, what);
	for (size_t r = 0; r < na; r++)
		if (a[r] != b[r])
			return hml__error_set(HML_ESHAPE, "quantity of interest '%s': record %zu is "
			                      "step %lld in the accurate run but %lld with %s",
			                      q->dataset, r, (long long)a[r], (long long)b[r], what);
	return 0;
}

/* Entry `s` for data set q, whose reference steps are s->steps[s->n]. */
static int compare_one(hml__qoi_series *s, const hml__workflow_qoi *q, const char *ref_path,
                       const char *path, const char *what)
{
	double *a = NULL, *b = NULL;
	int64_t *steps = NULL;
	size_t na = 0, nb = 0, ns = 0, per;
	int rc;

	s->qoi = q;
	if ((rc = hml__qoi_file_read_steps(path, q->dataset, &steps, &ns)) < 0 ||
	    (rc = same_steps(q, s->steps, s->n, steps, ns, what)) < 0 ||
	    (rc = hml__qoi_file_read(ref_path, q->dataset, &a, &na)) < 0 ||
	    (rc = hml__qoi_file_read(path, q->dataset, &b, &nb)) < 0)
		goto done;
	if (na != nb) {
		rc = hml__error_set(HML_ESHAPE, "quantity of interest '%s' has %zu values in the "
		                    "accurate run but %zu with %s", q->dataset, na, nb, what);
		goto done;
	}
	per = na / s->n;
	if (!(s->err = calloc(s->n, sizeof(*s->err))) ||
	    !(s->error = calloc(s->n, sizeof(*s->error))) ||
	    !(s->rel_l2 = calloc(s->n, sizeof(*s->rel_l2)))) {
		rc = hml__error_oom();
		goto done;
	}
	for (size_t r = 0; r < s->n; r++) {
		hml__errors_compute_floor(&s->err[r], a + r * per, b + r * per, per, q->mape_floor);
		s->error[r] = hml__errors_metric(&s->err[r], q->metric);
		s->rel_l2[r] = rel_l2(a + r * per, b + r * per, per);
	}
done:
	free(steps);
	free(a);
	free(b);
	return rc;
}

int hml__qoi_over_time(hml__qoi_series **out, size_t *n, const hml__workflow *w,
                       const char *ref_path, const char *path, const char *what)
{
	hml__qoi_series *s = calloc(w->nqoi ? w->nqoi : 1, sizeof(*s));
	size_t k = 0;
	int rc = 0;

	*out = NULL;
	*n = 0;
	if (!s)
		return hml__error_oom();
	for (size_t i = 0; i < w->nqoi && rc == 0; i++) {
		if ((rc = hml__qoi_file_read_steps(ref_path, w->qoi[i].dataset, &s[k].steps,
		                                   &s[k].n)) < 0 || s[k].n == 0)
			continue;
		rc = compare_one(&s[k], &w->qoi[i], ref_path, path, what);
		k++;
	}
	if (rc < 0) {
		hml__qoi_series_free(s, k + 1);
		return rc;
	}
	if (k == 0) {
		free(s);
		return 0;
	}
	*out = s;
	*n = k;
	return 0;
}

/* A JSON array of n figures, each at offset `off` of a record's errors, or
 * of the doubles v. */
static json_t *reals(const double *v, const hml__errors *e, size_t off, size_t n)
{
	json_t *a = json_array();

	for (size_t r = 0; a && r < n; r++) {
		double x = v ? v[r] : *(const double *)((const char *)&e[r] + off);

		if (json_array_append_new(a, hml__json_real(x)) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

json_t *hml__qoi_series_json(const hml__qoi_series *s, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < n; i++) {
		json_t *steps = json_array(), *o;

		for (size_t r = 0; steps && r < s[i].n; r++)
			if (json_array_append_new(steps, json_integer(s[i].steps[r])) < 0) {
				json_decref(steps);
				steps = NULL;
			}
		o = json_pack("{s:s, s:s, s:o*, s:o*, s:o*, s:o*, s:o*}",
			"dataset", s[i].qoi->dataset, "metric", s[i].qoi->metric, "steps", steps,
			"error", reals(s[i].error, NULL, 0, s[i].n),
			"rmse", reals(NULL, s[i].err, offsetof(hml__errors, rmse), s[i].n),
			"max_abs", reals(NULL, s[i].err, offsetof(hml__errors, max_abs), s[i].n),
			"rel_l2", reals(s[i].rel_l2, NULL, 0, s[i].n));
		if (!o || json_array_size(json_object_get(o, "steps")) != s[i].n ||
		    json_array_size(json_object_get(o, "rel_l2")) != s[i].n ||
		    json_array_append_new(a, o) < 0) {
			json_decref(o);
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/* `text` as a gnuplot single-quoted string (a quote doubled) on f. */
static void quoted(FILE *f, const char *text)
{
	fputc('\'', f);
	for (; *text; text++)
		fputs(*text == '\'' ? "''" : (char[2]){ *text, 0 }, f);
	fputc('\'', f);
}

static int write_file(const char *root, const char *path, FILE **f)
{
	if (hml__beneath_fopen(f, root, path, "w") < 0)
		return hml__error_set(HML_EIO, "cannot write '%s': %s", path,
		                      hml_error_last()->message);
	return 0;
}

static int close_file(FILE *f, const char *path)
{
	int bad = ferror(f);

	if (fclose(f) != 0 || bad)
		return hml__error_set(HML_EIO, "cannot write '%s'", path);
	return 0;
}

/* Data set i's records as gnuplot's index i (blocks parted by two blank
 * lines): step, error. */
static int write_data(const hml__qoi_series *s, size_t n, const char *root, const char *path,
                      int *positive)
{
	FILE *f;
	int rc;

	if ((rc = write_file(root, path, &f)) < 0)
		return rc;
	*positive = 1;
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%s# %s (%s)\n", i ? "\n\n" : "", s[i].qoi->dataset, s[i].qoi->metric);
		for (size_t r = 0; r < s[i].n; r++) {
			if (isfinite(s[i].error[r]))
				fprintf(f, "%lld %.9g\n", (long long)s[i].steps[r], s[i].error[r]);
			*positive &= !(s[i].error[r] <= 0);
		}
	}
	return close_file(f, path);
}

int hml__qoi_series_plot(const hml__qoi_series *s, size_t n, const char *title,
                         const char *root, const char *work, const char *png)
{
	char dat[4096], gp[4096], log[4096], out[4096];
	int rc, positive;
	FILE *f;

	snprintf(dat, sizeof(dat), "%s/over_time.dat", work);
	snprintf(gp, sizeof(gp), "%s/over_time.gp", work);
	snprintf(log, sizeof(log), "%s/gnuplot.log", work);
	snprintf(out, sizeof(out), "%s/%s", work, png);
	if ((rc = write_data(s, n, root, dat, &positive)) < 0 || (rc = write_file(root, gp, &f)) < 0)
		return rc;
	fputs("set terminal pngcairo size 900,560 noenhanced\nset output ", f);
	quoted(f, out);
	fputs("\nset title ", f);
	quoted(f, title);
	fprintf(f, "\nset xlabel 'step'\nset ylabel 'error of the surrogate run'\n"
	        "set key top left\nset grid\n%s", positive ? "set logscale y\n" : "");
	fputs("plot ", f);
	for (size_t i = 0; i < n; i++) {
		char key[256];

		snprintf(key, sizeof(key), "%s (%s)", s[i].qoi->dataset, s[i].qoi->metric);
		fprintf(f, "%s", i ? ", \\\n     " : "");
		quoted(f, dat);
		fprintf(f, " index %zu using 1:2 with linespoints title ", i);
		quoted(f, key);
	}
	fputs("\nunset output\n", f);
	if ((rc = close_file(f, gp)) < 0 || (rc = hml__gnuplot_run(gp, log)) < 0)
		return rc;
	if (access(out, R_OK) != 0)
		return hml__error_set(HML_ERROR, "gnuplot made no '%s'", png);
	return 0;
}
