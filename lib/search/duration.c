/*
 * lib/search/duration.c - durations read and written (see duration.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "search/duration.h"

/* The number before the unit: digits with at most one point, so that
 * strtod's signs, exponents, hex, inf and nan never get through. */
static int plain_number(const char *s, size_t n)
{
	size_t digits = strspn(s, "0123456789"), rest;

	if (digits == n)
		return n > 0;
	if (s[digits] != '.')
		return 0;
	rest = strspn(s + digits + 1, "0123456789");
	return digits + 1 + rest == n && digits + rest > 0;
}

int hml__search_duration_parse(double *seconds, const char *text)
{
	size_t n = text ? strlen(text) : 0;
	double unit = 1, v;
	char num[64];

	if (n > 0 && strchr("smh", text[n - 1]))
		unit = text[n - 1] == 'h' ? 3600 : text[n - 1] == 'm' ? 60 : 1;
	if (unit != 1 || (n > 0 && text[n - 1] == 's'))
		n--;
	if (!text || n >= sizeof(num) || !plain_number(text, n))
		return hml__error_set(HML_EINVALID, "'%s' is not a duration (a number of seconds, or "
		                      "with s, m or h: 90, 90s, 45m, 1.5h)", text ? text : "");
	memcpy(num, text, n);
	num[n] = '\0';
	v = strtod(num, NULL) * unit;
	if (!(v > 0))
		return hml__error_set(HML_EINVALID, "duration '%s' must be positive", text);
	if (!(v <= HML__SEARCH_DURATION_MAX))
		return hml__error_set(HML_EINVALID, "duration '%s' is longer than a year", text);
	*seconds = v;
	return 0;
}

void hml__search_duration_format(char *buf, size_t size, double seconds)
{
	long s, m;

	if (!size)
		return;
	if (!(seconds >= 0) || !isfinite(seconds)) {
		snprintf(buf, size, "?");
		return;
	}
	if (seconds < 59.5) {
		snprintf(buf, size, "%.*gs", seconds < 10 ? 2 : 3, seconds);
		return;
	}
	if (seconds < 3570) {
		s = lround(seconds);
		m = s / 60;
		if (s % 60)
			snprintf(buf, size, "%ldm%02lds", m, s % 60);
		else
			snprintf(buf, size, "%ldm", m);
		return;
	}
	m = lround(seconds / 60);
	if (m % 60)
		snprintf(buf, size, "%ldh%02ldm", m / 60, m % 60);
	else
		snprintf(buf, size, "%ldh", m / 60);
}
