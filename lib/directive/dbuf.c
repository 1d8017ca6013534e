/*
 * lib/directive/dbuf.c - the growing text buffer the translator writes its
 * output into (emit.h): an allocation failure is kept in the buffer and
 * checked once, at the end.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "directive/emit.h"

void hml__dbuf_put(dbuf *b, const char *s, size_t n)
{
	if (b->oom || n == 0)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t cap = (b->cap ? b->cap * 2 : 4096);
		char *p;
		while (cap < b->n + n + 1)
			cap *= 2;
		if (!(p = realloc(b->p, cap))) {
			b->oom = 1;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = 0;
}

void hml__dbuf_printf(dbuf *b, const char *fmt, ...)
{
	char tmp[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(tmp)) {
		b->oom = 1;
		return;
	}
	hml__dbuf_put(b, tmp, (size_t)n);
}

void hml__dbuf_cstr(dbuf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '\\' && i + 1 < n && s[i + 1] == '\n') {
			hml__dbuf_put(b, " ", 1);
			i++;
		} else if (c == '"' || c == '\\') {
			hml__dbuf_put(b, "\\", 1);
			hml__dbuf_put(b, &c, 1);
		} else if (c == '\n' || c == '\r' || c == '\t') {
			hml__dbuf_put(b, " ", 1);
		} else if ((unsigned char)c < 0x20) {
			hml__dbuf_put(b, "?", 1);
		} else {
			hml__dbuf_put(b, &c, 1);
		}
	}
}
