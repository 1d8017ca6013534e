/*
 * lib/core/envname.c - HML_<KEY>_<LABEL>, built in one place.
 */
#include <string.h>

#include "core/envname.h"
#include "core/error.h"

int hml__envname_region(char *buf, size_t size, const char *var, const char *label)
{
	size_t n = strlen(var), i;

	if (size)
		buf[0] = '\0';
	if (n + 1 + strlen(label) + 1 > size)
		return hml__error_set(HML_EINVALID,
			"variable name for region '%s' is longer than %zu characters",
			label, size ? size - 1 : 0);
	memcpy(buf, var, n);
	buf[n++] = '_';
	/* By hand rather than with <ctype.h>: the name must not depend on the
	 * process's locale. */
	for (i = 0; label[i]; i++) {
		char c = label[i];

		buf[n++] = (c >= 'a' && c <= 'z') ? (char)(c - 'a' + 'A')
		         : ((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) ? c : '_';
	}
	buf[n] = '\0';
	return 0;
}

int hml__envname_matches(const char *entry, const char *var)
{
	size_t n = strlen(var);

	return strncmp(entry, var, n) == 0 &&
	       (entry[n] == '\0' || entry[n] == '=' || entry[n] == '_');
}

int hml__device_known(const char *v)
{
	return !v || !*v || strcmp(v, "auto") == 0 || strcmp(v, "cpu") == 0 ||
	       strcmp(v, "cuda") == 0;
}
