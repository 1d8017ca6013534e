/*
 * lib/run/argv.c - splitting --args and substituting "{seed}".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/util.h"
#include "run/argv.h"

#define BLANKS " \t\n"

int hml__argv_split(char ***out, const char *text)
{
	size_t n = 0, cap = 8, len;
	char **v = calloc(cap, sizeof(*v)), **bigger;

	*out = NULL;
	while (v && *text) {
		text += strspn(text, BLANKS);
		if (!*text)
			break;
		len = strcspn(text, BLANKS);
		if (n + 2 > cap) {
			if (!(bigger = realloc(v, (cap *= 2) * sizeof(*v))))
				goto oom;
			v = bigger;
		}
		if (!(v[n] = strndup(text, len)))
			goto oom;
		v[++n] = NULL;
		text += len;
	}
	if (!v)
		return hml__error_oom();
	*out = v;
	return 0;
oom:
	hml__strv_free(v);
	return hml__error_oom();
}

/* `arg` with every `ph` ("{seed}") replaced by `num` (malloc'ed). */
static char *subst_text(const char *arg, const char *ph, const char *num)
{
	const size_t plen = strlen(ph), nlen = strlen(num);
	size_t count = 0;
	const char *p;
	char *out, *o;

	for (p = arg; (p = strstr(p, ph)) != NULL; p += plen)
		count++;
	if (!(out = malloc(strlen(arg) + count * nlen + 1)))
		return NULL;
	for (o = out, p = arg; *p;) {
		if (strncmp(p, ph, plen) == 0) {
			memcpy(o, num, nlen);
			o += nlen;
			p += plen;
		} else {
			*o++ = *p++;
		}
	}
	*o = '\0';
	return out;
}

static char *subst(const char *arg, const char *num)
{
	return subst_text(arg, HML__ARGV_SEED, num);
}

int hml__argv_build(char ***out, const char *program, const char *const *args,
                    const int64_t *seed)
{
	size_t n = 0;
	char num[32], **v;

	*out = NULL;
	while (args && args[n])
		n++;
	if (seed)
		snprintf(num, sizeof(num), "%lld", (long long)*seed);
	if (!(v = calloc(n + 2, sizeof(*v))) || !(v[0] = strdup(program)))
		goto oom;
	for (size_t i = 0; i < n; i++)
		if (!(v[i + 1] = seed ? subst(args[i], num) : strdup(args[i])))
			goto oom;
	*out = v;
	return 0;
oom:
	hml__strv_free(v);
	return hml__error_oom();
}

int hml__argv_copy(char ***out, const char *const *v, int n)
{
	char **copy;

	*out = NULL;
	if (n < 0)
		for (n = 0; v && v[n]; n++)
			;
	if (!(copy = calloc((size_t)n + 1, sizeof(*copy))))
		return hml__error_oom();
	for (int i = 0; i < n; i++)
		if (!(copy[i] = strdup(v[i]))) {
			hml__strv_free(copy);
			return hml__error_oom();
		}
	*out = copy;
	return 0;
}

int hml__argv_launch(char ***out, const char *const *launcher, int ranks, char **argv)
{
	size_t nl = 0, na = 0;
	char num[16], **v;

	*out = NULL;
	while (launcher[nl])
		nl++;
	while (argv[na])
		na++;
	snprintf(num, sizeof(num), "%d", ranks);
	if (!(v = calloc(nl + na + 1, sizeof(*v))))
		return hml__error_oom();
	for (size_t i = 0; i < nl; i++)
		if (!(v[i] = subst_text(launcher[i], HML__ARGV_RANKS, num)))
			goto oom;
	for (size_t i = 0; i < na; i++)
		if (!(v[nl + i] = strdup(argv[i])))
			goto oom;
	*out = v;
	return 0;
oom:
	hml__strv_free(v);
	return hml__error_oom();
}
