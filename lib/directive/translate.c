/*
 * lib/directive/translate.c - the translator's driver (directive.h): one
 * pass over the file's tokens; declarations are remembered, ml and qoi
 * directives replaced by their code (emit.c), the rest copied byte for
 * byte. The runtime's header of directive calls goes after the last #include that precedes
 * the first directive (outside any conditional), so that the user's
 * feature macros and headers come first.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "directive/directive.h"
#include "directive/emit.h"
#include "directive/extent.h"

int hml__directive_present(const char *src)
{
	dscan sc;
	dtok t;

	hml__dscan_init(&sc, src, 0, strlen(src), 1, 0, 0);
	for (t = hml__dscan_next(&sc); t.kind != DT_EOF; t = hml__dscan_next(&sc))
		if (t.kind == DT_PP && hml__directive_is(src, t.start, t.end))
			return 1;
	/* an unterminated comment or literal: let the translator report it
	 * only where a directive could hide; the compiler reports the rest */
	return 0;
}

static int pp_is(const char *src, const dtok *t, const char *w)
{
	size_t p = t->start + 1, n = strlen(w);

	while (p < t->end && (src[p] == ' ' || src[p] == '\t'))
		p++;
	return p + n <= t->end && memcmp(src + p, w, n) == 0;
}

static size_t line_end(const char *src, size_t off)
{
	while (src[off] && src[off] != '\n')
		off++;
	return src[off] ? off + 1 : off;
}

static int remember(demit *m, ddirective *d)
{
	if (m->decls.n == m->decls.cap) {
		int cap = m->decls.cap ? m->decls.cap * 2 : 16;
		ddirective **p = realloc(m->decls.d, (size_t)cap * sizeof(*p));
		if (!p)
			return hml__error_oom();
		m->decls.d = p;
		m->decls.cap = cap;
	}
	m->decls.d[m->decls.n++] = d;
	return 0;
}

/* Start the output at the first directive: the text before the insertion
 * point, the helpers' declarations, a #line back to the user's file. */
static void start_output(demit *m, size_t ins)
{
	int line, col;

	hml__dbuf_put(m->out, m->src, ins);
	if (ins > 0 && m->src[ins - 1] != '\n')
		hml__dbuf_put(m->out, "\n", 1);
	hml__dbuf_put(m->out, hml__dprelude_head, strlen(hml__dprelude_head));
	hml__dscan_where(m->src, ins, &line, &col);
	hml__dbuf_printf(m->out, "#line %d \"", line);
	hml__dbuf_cstr(m->out, m->path, strlen(m->path));
	hml__dbuf_printf(m->out, "\"\n");
}

static int translate(demit *m, int *count, size_t *copied)
{
	const char *src = m->src;
	size_t len = strlen(src), ins = 0;
	int depth = 0, include = 0, rc;
	dscan sc;
	dtok t;

	hml__dscan_init(&sc, src, 0, len, 1, 0, 0);
	for (t = hml__dscan_next(&sc); t.kind != DT_EOF; t = hml__dscan_next(&sc)) {
		ddirective *d;
		size_t s, e;
		if (t.kind != DT_PP)
			continue;
		if (!hml__directive_is(src, t.start, t.end)) {
			if (*count)
				continue;
			if (pp_is(src, &t, "if"))
				depth++;
			else if (pp_is(src, &t, "endif"))
				depth--;
			else if (pp_is(src, &t, "include"))
				include = 1;
			if (include && depth == 0) {
				ins = line_end(src, t.end);
				include = 0;
			}
			continue;
		}
		if (!(d = calloc(1, sizeof(*d))))
			return hml__error_oom();
		if ((rc = hml__directive_parse(d, src, m->path, &t)) < 0 || (rc = remember(m, d)) < 0) {
			free(d);
			return rc;
		}
		if ((*count)++ == 0) {
			start_output(m, ins);
			*copied = ins;
		}
		hml__dbuf_put(m->out, src + *copied, t.start - *copied);
		if (d->kind == DD_ML) {
			if ((rc = hml__dstmt_extent(src, m->path, &t, &s, &e)) < 0 ||
			    (rc = hml__demit_ml(m, d, s, e)) < 0)
				return rc;
			*copied = e;
			hml__dscan_where(src, e, &sc.line, &rc);
			sc.pos = e;
			sc.line_start = e - (size_t)(rc - 1);
			continue;
		}
		if (d->kind == DD_QOI && (rc = hml__demit_qoi(m, d)) < 0)
			return rc;
		if (d->kind != DD_QOI)
			hml__dbuf_printf(m->out, "/* hml: declaration (used below) */");
		/* keep the directive's continuation lines as lines */
		for (size_t p = t.start; p < t.end; p++)
			if (src[p] == '\n')
				hml__dbuf_put(m->out, "\n", 1);
		*copied = t.end;
	}
	if (sc.error)
		return hml__directive_error(src, m->path, &sc.error_at, sc.error);
	return 0;
}

int hml__directive_translate(char **out, int *count, const char *src, const char *path)
{
	dbuf b = { 0 };
	demit m;
	size_t copied = 0;
	const char *slash = strrchr(path, '/');
	char base[64];
	int rc, i;

	*out = NULL;
	*count = 0;
	memset(&m, 0, sizeof(m));
	/* the default label: the file's name without extension, letters,
	 * digits and '_' */
	snprintf(base, sizeof(base), "%s", slash ? slash + 1 : path);
	for (i = 0; base[i] && base[i] != '.'; i++)
		if (!isalnum((unsigned char)base[i]))
			base[i] = '_';
	base[i] = 0;
	m.src = src;
	m.path = path;
	m.base = base[0] ? base : "region";
	m.out = &b;
	rc = translate(&m, count, &copied);
	if (rc >= 0 && *count) {
		hml__dbuf_put(&b, src + copied, strlen(src) - copied);
		if (b.n && b.p[b.n - 1] != '\n')
			hml__dbuf_put(&b, "\n", 1);
		hml__dbuf_printf(&b, "/* hml translate: the error path of the directives above */\n"
		                     "#line 1 \"<hml directive helpers>\"\n");
		hml__dbuf_put(&b, hml__dprelude_tail, strlen(hml__dprelude_tail));
		if (b.oom)
			rc = hml__error_oom();
	}
	for (i = 0; i < m.decls.n; i++)
		free(m.decls.d[i]);
	free(m.decls.d);
	if (rc < 0 || !*count) {
		free(b.p);
		if (rc < 0)
			*count = 0;
		return rc;
	}
	*out = b.p;
	return 0;
}
