/*
 * lib/store/ids.c - the one grammar of record ids (see ids.h).
 */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "store/ids.h"

typedef struct id_kind {
	const char *kind;
	char prefix;
	const char *noun;
} id_kind;

static const id_kind kinds[] = {
	{ "datasets", 'd', "data set" },
	{ "models", 'm', "model" },
	{ "deployments", 'p', "deployment" },
	{ "evaluations", 'e', "evaluation" },
	{ "searches", 's', "search" },
	{ "compiled", 'c', "compiled model" },
	{ "trials", 't', "trial" },
};

static const id_kind *kind_find(const char *kind)
{
	for (size_t i = 0; kind && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(kinds[i].kind, kind) == 0)
			return &kinds[i];
	return NULL;
}

char hml__id_prefix(const char *kind)
{
	const id_kind *k = kind_find(kind);

	return k ? k->prefix : 0;
}

long hml__id_number(const char *kind, const char *s, size_t len)
{
	const id_kind *k = kind_find(kind);
	long v = 0;

	if (!k || !s || len < 2 || len > HML__ID_DIGITS + 1 || s[0] != k->prefix)
		return -1;
	if (s[1] == '0' && len > 2)
		return -1;   /* a leading zero: "m01" would name m1's files too */
	for (size_t i = 1; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

int hml__id_check(const char *kind, const char *id)
{
	const id_kind *k = kind_find(kind);
	char shown[41];
	size_t n;

	if (!k)
		return hml__error_set(HML_EINVALID, "unknown kind of id '%s'", kind ? kind : "(null)");
	if (id && hml__id_number(kind, id, strlen(id)) >= 0)
		return 0;
	if (!id)
		return hml__error_set(HML_EINVALID, "null is not a %s id (%c1, %c2, ...)", k->noun,
		                      k->prefix, k->prefix);
	/* The message is one line: control bytes of the text shown as '?'. */
	for (n = 0; id[n] && n < sizeof(shown) - 1; n++)
		shown[n] = (unsigned char)id[n] < 0x20 || id[n] == 0x7f ? '?' : id[n];
	shown[n] = '\0';
	return hml__error_set(HML_EINVALID, "'%s%s' is not a %s id (%c1, %c2, ...)", shown,
	                      id[n] ? "..." : "", k->noun, k->prefix, k->prefix);
}

int hml__id_format(char *buf, size_t size, const char *kind, long n)
{
	const id_kind *k = kind_find(kind);
	int len;

	if (!k || n < 0)
		return hml__error_set(HML_EINVALID, "cannot make an id of kind '%s' numbered %ld",
		                      kind ? kind : "(null)", n);
	len = snprintf(buf, size, "%c%ld", k->prefix, n);
	if (len < 0 || (size_t)len >= size || hml__id_number(kind, buf, (size_t)len) != n)
		return hml__error_set(HML_EINVALID, "cannot make an id of kind '%s' numbered %ld: "
		                      "more than %d digits", kind, n, HML__ID_DIGITS);
	return 0;
}
