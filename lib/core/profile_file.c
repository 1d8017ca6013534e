/*
 * lib/core/profile_file.c - the profile JSON, written with jansson by the
 * runtime and read with it by the CLI.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "core/error.h"
#include "core/json.h"
#include "core/profile_file.h"
#include "core/rankfile.h"
#include "core/read_file.h"
#include "core/util.h"
#include "hml/version.h"

/* The counters and timers of hml_region_stats, by their JSON names. */
#define U64_FIELDS(X) X(calls) X(original_calls) X(model_calls) X(shadow_calls) \
	X(fallback_calls) X(rows_in) X(rows_out) X(nonfinite_calls) \
	X(checked_rows) X(guarded_rows) X(guarded_calls) X(guard_whole_calls) \
	X(agreed_calls)
#define DBL_FIELDS(X) X(region_s) X(gather_s) X(forward_s) X(scatter_s) \
	X(original_s) X(write_s) X(shadow_rmse) X(shadow_max_abs) X(guard_s) \
	X(collect_outside_s)

static int swaps_set(json_t *o, const hml__profile_swaps *s)
{
	json_t *a = json_array();
	int bad = !a;

	for (size_t i = 0; a && i < s->n; i++)
		bad |= json_array_append_new(a, json_pack("{s:s, s:s, s:I}", "from", s->at[i].from,
		                             "to", s->at[i].to, "call", (json_int_t)s->at[i].call)) < 0;
	bad |= json_object_set_new(o, "swaps", a) < 0;
	if (s->done > s->n)
		bad |= json_object_set_new(o, "swaps_done", json_integer((json_int_t)s->done)) < 0;
	bad |= json_object_set_new(o, "swaps_refused", json_integer((json_int_t)s->refused)) < 0;
	return bad ? -1 : 0;
}

static void swaps_read(const json_t *o, hml__profile_swaps *s)
{
	const json_t *e;
	json_int_t i;
	size_t k;

	memset(s, 0, sizeof(*s));
	json_array_foreach(json_object_get(o, "swaps"), k, e) {
		const char *from = json_string_value(json_object_get(e, "from"));
		const char *to = json_string_value(json_object_get(e, "to"));

		if (s->n == HML__PROFILE_SWAPS_MAX)
			break;
		snprintf(s->at[s->n].from, sizeof(s->at[s->n].from), "%s", from ? from : "");
		snprintf(s->at[s->n].to, sizeof(s->at[s->n].to), "%s", to ? to : "");
		i = json_integer_value(json_object_get(e, "call"));
		s->at[s->n++].call = i > 0 ? (uint64_t)i : 0;
	}
	i = json_integer_value(json_object_get(o, "swaps_done"));
	s->done = i > (json_int_t)s->n ? (uint64_t)i : s->n;
	i = json_integer_value(json_object_get(o, "swaps_refused"));
	s->refused = i > 0 ? (uint64_t)i : 0;
}

static json_t *record_json(const hml__profile_record *r)
{
	const hml_region_stats *s = &r->stats;
	json_t *o = json_pack("{s:s, s:s}", "label", r->label, "mode", r->mode);
	int bad = !o;

#define SET_U64(f) bad |= !o || json_object_set_new(o, #f, json_integer((json_int_t)s->f)) < 0;
#define SET_DBL(f) bad |= !o || json_object_set_new(o, #f, hml__json_real(s->f)) < 0;
	U64_FIELDS(SET_U64)
	DBL_FIELDS(SET_DBL)
#undef SET_U64
#undef SET_DBL
	if (r->threads > 0)
		bad |= !o || json_object_set_new(o, "threads", json_integer(r->threads)) < 0;
	if (r->guard[0])
		bad |= !o || json_object_set_new(o, "guard", json_string(r->guard)) < 0;
	bad |= !o || swaps_set(o, &r->swaps) < 0;
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

double hml__profile_cpu_wait_share(const hml__profile_cpu *c)
{
	double all = c ? c->run_s + c->wait_s : NAN;

	return all > 0 && c->run_s >= 0 && c->wait_s >= 0 ? c->wait_s / all : NAN;
}

int hml__profile_cpu_waited(const hml__profile_cpu *c)
{
	double procs = c && c->procs >= 1 ? c->procs : 1;   /* NaN, 0: one */

	return hml__profile_cpu_wait_share(c) >= HML__CPU_WAIT_NOTED &&
	       c->wait_s >= HML__CPU_WAIT_NOTED_SECONDS * procs;
}

int hml__profile_file_write(const char *path, const hml__profile_record *recs, size_t n,
                            const hml__profile_cpu *cpu)
{
	char tmp[4096];
	json_t *doc, *regions = json_array(), *r;
	int rc = 0;

	doc = json_pack("{s:i, s:s, s:I, s:o}", "schema_version", HML__PROFILE_SCHEMA,
	                "hml_version", hml_version(), "pid", (json_int_t)getpid(),
	                "regions", regions);
	for (size_t i = 0; doc && i < n; i++)
		if (!(r = record_json(&recs[i])) || json_array_append_new(regions, r) < 0) {
			json_decref(doc);
			doc = NULL;
		}
	if (doc && cpu && cpu->run_s >= 0 && cpu->wait_s >= 0 &&
	    json_object_set_new(doc, "cpu", json_pack("{s:f, s:f}", "run_s", cpu->run_s,
	                                              "wait_s", cpu->wait_s)) < 0) {
		json_decref(doc);
		doc = NULL;
	}
	if (!doc)
		return hml__error_oom();
	/* The rename would put a regular file in place of a device or a FIFO
	 * (HML_PROFILE=/dev/null as root), or of a link instead of its target. */
	if ((rc = hml__path_replaceable(path)) < 0)
		goto done;
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >= sizeof(tmp)) {
		rc = hml__error_set(HML_EIO, "cannot write profile '%s': name too long", path);
		goto done;
	}
	if (json_dump_file(doc, tmp, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0) {
		rc = hml__error_set(HML_EIO, "cannot write profile '%s': %s", path, strerror(errno));
		remove(tmp);
		goto done;
	}
	if (rename(tmp, path) != 0) {
		rc = hml__error_set(HML_EIO, "cannot write profile '%s': %s", path, strerror(errno));
		remove(tmp);
	}
done:
	json_decref(doc);
	return rc;
}

static double get_number(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

static void record_read(const json_t *o, hml__profile_record *out)
{
	hml_region_stats *s = &out->stats;
	const char *mode = json_string_value(json_object_get(o, "mode"));
	json_int_t i;

	snprintf(out->label, sizeof(out->label), "%s",
	         json_string_value(json_object_get(o, "label")));
	snprintf(out->mode, sizeof(out->mode), "%s", mode ? mode : "");
#define GET_U64(f) i = json_integer_value(json_object_get(o, #f)); s->f = i > 0 ? (uint64_t)i : 0;
#define GET_DBL(f) s->f = get_number(o, #f);
	U64_FIELDS(GET_U64)
	DBL_FIELDS(GET_DBL)
#undef GET_U64
#undef GET_DBL
	i = json_integer_value(json_object_get(o, "threads"));
	out->threads = i > 0 && i <= INT_MAX ? (int)i : 0;
	snprintf(out->guard, sizeof(out->guard), "%s",
	         json_string_value(json_object_get(o, "guard")) ?
	         json_string_value(json_object_get(o, "guard")) : "");
	if (isnan(s->guard_s))   /* profiles of older hml */
		s->guard_s = 0.0;
	if (isnan(s->collect_outside_s))
		s->collect_outside_s = 0.0;
	swaps_read(o, &out->swaps);
}

/* A region freed and opened again under its label (a program annotated
 * with directives binds a region anew when its row count changes) leaves
 * several records: one region's record, counters and times summed, the
 * shadow error over all its shadowed calls, the first one's mode. */
static void record_add(hml__profile_record *into, const hml__profile_record *r)
{
	hml_region_stats *a = &into->stats;
	const hml_region_stats *b = &r->stats;
	uint64_t n = a->shadow_calls + b->shadow_calls;
	double sa = a->shadow_calls ? a->shadow_rmse * a->shadow_rmse * (double)a->shadow_calls : 0.0;
	double sb = b->shadow_calls ? b->shadow_rmse * b->shadow_rmse * (double)b->shadow_calls : 0.0;

	if (n > 0)
		a->shadow_rmse = sqrt((sa + sb) / (double)n);
	if (b->shadow_calls && (!a->shadow_calls || !(a->shadow_max_abs >= b->shadow_max_abs)))
		a->shadow_max_abs = b->shadow_max_abs;
#define ADD_U64(f) a->f += b->f;
	U64_FIELDS(ADD_U64)
#undef ADD_U64
	a->region_s += b->region_s;
	a->gather_s += b->gather_s;
	a->forward_s += b->forward_s;
	a->scatter_s += b->scatter_s;
	a->original_s += b->original_s;
	a->write_s += b->write_s;
	a->guard_s += b->guard_s;
	a->collect_outside_s += b->collect_outside_s;
	if (!into->guard[0])
		snprintf(into->guard, sizeof(into->guard), "%s", r->guard);
	for (size_t k = 0; k < r->swaps.n && into->swaps.n < HML__PROFILE_SWAPS_MAX; k++)
		into->swaps.at[into->swaps.n++] = r->swaps.at[k];
	into->swaps.done += r->swaps.done;
	into->swaps.refused += r->swaps.refused;
}

int hml__profile_file_find(const char *path, const char *label, hml__profile_record *out)
{
	json_error_t err;
	json_t *doc, *r;
	const json_t *version;
	char *text;
	size_t i, len;
	int rc = HML_ENOTFOUND;

	memset(out, 0, sizeof(*out));
	/* The application wrote it: a FIFO or an endless file in its place
	 * must neither block nor exhaust the reader. */
	if ((rc = hml__read_file_max(path, HML__PROFILE_MAX_BYTES, &text, &len)) < 0) {
		hml__error_saved why;

		hml__error_save(&why);
		return hml__error_set(HML_EIO, "cannot read profile '%s': %s", path,
		                      hml__read_file_reason(why.message, path));
	}
	doc = json_loadb(text, len, 0, &err);
	free(text);
	rc = HML_ENOTFOUND;
	if (!doc)
		return hml__error_set(HML_EIO, "cannot read profile '%s': %s", path, err.text);
	version = json_object_get(doc, "schema_version");
	if (!json_is_integer(version) || !json_is_array(json_object_get(doc, "regions"))) {
		rc = hml__error_set(HML_EIO, "cannot read profile '%s': not an hml profile", path);
		goto done;
	}
	if (json_integer_value(version) > HML__PROFILE_SCHEMA) {
		rc = hml__error_set(HML_ENOTSUPPORTED,
			"profile '%s' has schema_version %lld; this hml reads %d", path,
			(long long)json_integer_value(version), HML__PROFILE_SCHEMA);
		goto done;
	}
	json_array_foreach(json_object_get(doc, "regions"), i, r) {
		const json_t *l = json_object_get(r, "label");

		if (json_is_string(l) && strcmp(json_string_value(l), label) == 0) {
			hml__profile_record more;
			if (rc == 0) {
				record_read(r, &more);
				record_add(out, &more);
			} else {
				record_read(r, out);
			}
			rc = 0;
		}
	}
	if (rc < 0)
		rc = hml__error_set(HML_ENOTFOUND,
			"the application never entered region '%s' (profile '%s')", label, path);
	r = json_object_get(doc, "cpu");
	out->cpu.run_s = get_number(r, "run_s") >= 0 ? get_number(r, "run_s") : NAN;
	out->cpu.wait_s = get_number(r, "wait_s") >= 0 ? get_number(r, "wait_s") : NAN;
	out->cpu.procs = 1;
done:
	json_decref(doc);
	return rc;
}

int hml__profile_file_find_ranks(const char *path, int ranks, const char *label,
                                 hml__profile_record *out)
{
	hml__profile_record more;
	char *own = NULL;
	int rc = 0, found = 0;

	if (ranks <= 1)
		return hml__profile_file_find(path, label, out);
	memset(out, 0, sizeof(*out));
	for (int k = 0; k < ranks && rc == 0; k++) {
		if ((rc = hml__rankfile_path(&own, path, k)) < 0)
			break;
		rc = hml__profile_file_find(own, label, found ? &more : out);
		if (rc == HML_ENOTFOUND)   /* this rank never entered the region */
			rc = 0;
		else if (rc == 0 && found++) {
			record_add(out, &more);
			out->cpu.run_s += more.cpu.run_s;
			out->cpu.wait_s += more.cpu.wait_s;
			out->cpu.procs += more.cpu.procs;
		}
		free(own);
		own = NULL;
	}
	if (rc == 0 && !found)
		rc = hml__error_set(HML_ENOTFOUND, "no rank of %d entered region '%s' (profiles "
		                    "'%s' by rank)", ranks, label, path);
	return rc;
}
