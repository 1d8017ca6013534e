/*
 * lib/deploy/latency.c - the card contract of per-target latencies (latency.h):
 * target names, the card's "latency" object written and read. The
 * measurement is in latency_measure.c (it needs the runtime's loaders).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "deploy/cbuild.h"
#include "deploy/latency.h"
#include "sys/fsutil.h"

static const char *const target_names[HML__NTARGETS] = { "torchscript", "c" };

const char *hml__target_name(int t)
{
	return t >= 0 && t < HML__NTARGETS ? target_names[t] : NULL;
}

int hml__target_parse(const char *name)
{
	for (int t = 0; name && t < HML__NTARGETS; t++)
		if (strcmp(name, target_names[t]) == 0)
			return t;
	return -1;
}

int hml__target_family_compiles(const char *family)
{
	static const char *const families[] = { "mlp", "cnn", "cnnvec" };   /* lib/deploy/export.h */

	for (size_t i = 0; family && i < sizeof(families) / sizeof(families[0]); i++)
		if (strcmp(family, families[i]) == 0)
			return 1;
	return 0;
}

int hml__target_auto(const char *family, char *why, size_t size)
{
	if (!why || !size) {
		why = NULL;
		size = 0;
	}
#ifndef HML_WITH_TORCH
	(void)family;
	return hml__target_c_found(why, size) ? HML__TARGET_C : HML__TARGET_TORCHSCRIPT;
#else
	if (!hml__target_family_compiles(family)) {
		if (why)
			snprintf(why, size, "models of family '%s' do not compile to C",
			         family ? family : "?");
		return HML__TARGET_TORCHSCRIPT;
	}
	return hml__target_c_found(why, size) ? HML__TARGET_C : HML__TARGET_TORCHSCRIPT;
#endif
}

int hml__target_c_found(char *why, size_t size)
{
#ifndef HML_WITH_TORCH
	if (why && size)
		snprintf(why, size, "hml is built without libtorch: it cannot read models to compile "
		         "them to C");
	return 0;
#else
	char *cc = NULL;
	int rc = hml__cbuild_find_cc(&cc);

	free(cc);
	if (why && size)
		snprintf(why, size, "%s", rc < 0 ? hml_error_last()->message : "");
	return rc == 0;
#endif
}

void hml__latency_init(hml__latency *l)
{
	memset(l, 0, sizeof(*l));
	for (int t = 0; t < HML__NTARGETS; t++)
		l->seconds[t] = l->startup[t] = NAN;
}

/* ---- the card contract ---------------------------------------------- */

json_t *hml__latency_to_json(const hml__latency *l)
{
	json_t *j = json_object(), *why = json_object(), *up = json_object();

	if (!j || !why || !up)
		goto oom;
	for (int t = 0; t < HML__NTARGETS; t++) {
		double s = l->seconds[t];

		if (json_object_set_new(j, target_names[t], isfinite(s) && s > 0 ? json_real(s)
		                                                                  : json_null()) < 0)
			goto oom;
		if (l->unavailable[t][0] &&
		    json_object_set_new(why, target_names[t], json_string(l->unavailable[t])) < 0)
			goto oom;
		if (isfinite(l->startup[t]) && l->startup[t] >= 0 &&
		    json_object_set_new(up, target_names[t], json_real(l->startup[t])) < 0)
			goto oom;
	}
	if (json_object_size(up)) {
		if (json_object_set(j, "startup", up) < 0)
			goto oom;
	}
	json_decref(up);
	up = NULL;
	if (json_object_set_new(j, "batch", json_integer((json_int_t)l->batch)) < 0 ||
	    json_object_set_new(j, "threads", json_integer(l->threads)) < 0 ||
	    json_object_set_new(j, "machine", json_string(l->machine)) < 0)
		goto oom;
	if (json_object_size(why))
		json_object_set_new(j, "unavailable", why);
	else
		json_decref(why);
	return j;
oom:
	json_decref(j);
	json_decref(why);
	json_decref(up);
	hml__error_oom();
	return NULL;
}

static int malformed(const char *why, const char *key)
{
	return hml__error_set(HML_EINVALID, "the card's latency is malformed: %s '%s'", why, key);
}

/* A string member into buf ("" when absent). */
static int read_string(char *buf, size_t size, const json_t *v, const char *key)
{
	if (!v)
		return 0;
	if (!json_is_string(v))
		return malformed("not a string:", key);
	if (json_string_length(v) >= size)
		return malformed("too long:", key);
	memcpy(buf, json_string_value(v), json_string_length(v) + 1);
	return 0;
}

/* "startup": {target: seconds >= 0, ...} (optional) */
static int read_startup(hml__latency *l, const json_t *up)
{
	if (!up)
		return 0;
	if (!json_is_object(up))
		return malformed("not an object:", "startup");
	for (int t = 0; t < HML__NTARGETS; t++) {
		const json_t *v = json_object_get(up, target_names[t]);

		if (!v)
			continue;
		if (!json_is_number(v) || !isfinite(json_number_value(v)) || json_number_value(v) < 0)
			return malformed("not a number of seconds:", "startup");
		l->startup[t] = json_number_value(v);
	}
	return 0;
}

int hml__latency_from_json(hml__latency *l, const json_t *j)
{
	const json_t *v, *why;
	int rc;

	hml__latency_init(l);
	if (!j)
		return hml__error_set(HML_ENOTFOUND, "the model's card has no latency");
	if (!json_is_object(j))
		return hml__error_set(HML_EINVALID, "the card's latency is malformed: not an object");
	for (int t = 0; t < HML__NTARGETS; t++) {
		v = json_object_get(j, target_names[t]);
		if (!v || json_is_null(v))
			continue;
		if (!json_is_number(v) || !isfinite(json_number_value(v)) || json_number_value(v) <= 0)
			return malformed("not a positive number or null:", target_names[t]);
		l->seconds[t] = json_number_value(v);
	}
	v = json_object_get(j, "batch");
	if (v && (!json_is_integer(v) || json_integer_value(v) < 0))
		return malformed("not a positive integer:", "batch");
	l->batch = v ? (int64_t)json_integer_value(v) : 0;
	v = json_object_get(j, "threads");
	if (v && (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 1 << 20))
		return malformed("not a thread count:", "threads");
	l->threads = v ? (int)json_integer_value(v) : 0;
	if ((rc = read_string(l->machine, sizeof(l->machine), json_object_get(j, "machine"),
	                      "machine")) < 0)
		return rc;
	if ((rc = read_startup(l, json_object_get(j, "startup"))) < 0)
		return rc;
	why = json_object_get(j, "unavailable");
	if (why && !json_is_object(why))
		return malformed("not an object:", "unavailable");
	for (int t = 0; why && t < HML__NTARGETS; t++)
		if ((rc = read_string(l->unavailable[t], sizeof(l->unavailable[t]),
		                      json_object_get(why, target_names[t]), target_names[t])) < 0)
			return rc;
	return 0;
}

int hml__latency_of_record(hml__latency *l, const json_t *model_record)
{
	return hml__latency_from_json(l, json_object_get(model_record, "latency"));
}

void hml__latency_machine(char *buf, size_t size)
{
	char *info = NULL, *p, cpu[128] = "unknown CPU";
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (hml__read_file("/proc/cpuinfo", &info, NULL) == 0 &&
	    (p = strstr(info, "model name")) && (p = strchr(p, ':'))) {
		p += 1 + strspn(p + 1, " \t");
		snprintf(cpu, sizeof(cpu), "%.*s", (int)strcspn(p, "\n"), p);
	}
	free(info);
#if defined(__x86_64__)
	snprintf(buf, size, "x86_64, %s, %ld cores", cpu, n);
#elif defined(__aarch64__)
	snprintf(buf, size, "aarch64, %s, %ld cores", cpu, n);
#else
	snprintf(buf, size, "%s, %ld cores", cpu, n);
#endif
}

