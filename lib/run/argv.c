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

/* `arg` with every "{seed}" replaced by `num` (malloc'ed). */
static char *subst(const char *arg, const char *num)
{
	const size_t plen = strlen(HML__ARGV_SEED), nlen = strlen(num);
	size_t count = 0;
	const char *p;
	char *out, *o;

	for (p = arg; (p = strstr(p, HML__ARGV_SEED)) != NULL; p += plen)
		count++;
	if (!(out = malloc(strlen(arg) + count * nlen + 1)))
		return NULL;
	for (o = out, p = arg; *p;) {
		if (strncmp(p, HML__ARGV_SEED, plen) == 0) {
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
