/*
 * lib/directive/emit_qoi.c - the code of a qoi directive (emit.h): one call
 * of the runtime's hml_dir_qoi() on the directive's line, the array from
 * its start in its dimensions (a slice that starts elsewhere:
 * hml__demit_qoi_slice() in emit.c, from the array's declared shape).
 */
#include <stdio.h>
#include <string.h>

#include "directive/emit.h"

static int span_is_zero(const char *src, dspan sp)
{
	while (sp.s < sp.e && (src[sp.s] == ' ' || src[sp.s] == '\t'))
		sp.s++;
	while (sp.e > sp.s && (src[sp.e - 1] == ' ' || src[sp.e - 1] == '\t'))
		sp.e--;
	return sp.e == sp.s + 1 && src[sp.s] == '0';
}

/* qoi(a[0:N, 0:M, ...]): the array from its start, in its dimensions. */
static int emit_qoi_nd(demit *m, const ddirective *d)
{
	const char *src = m->src;
	const darray *a = &d->qoi.arg[0];
	dbuf *o = m->out;
	int n = (int)(a->base.e - a->base.s), k;

	hml__dbuf_printf(o, "hml__dir_ck(hml_dir_qoi(\"");
	hml__dbuf_cstr(o, m->path, strlen(m->path));
	hml__dbuf_printf(o, ":%d\", ", d->at.line);
	if (d->qoi_name.s < d->qoi_name.e)
		hml__dput_span_or(o, src, d->qoi_name, "(", ")", "");
	else
		hml__dbuf_printf(o, "\"%.*s\"", n, src + a->base.s);
	hml__dbuf_printf(o, ", &(%.*s)[0], HML__DIR_DT(&(%.*s)[0]), %d", n, src + a->base.s,
	                 n, src + a->base.s, a->nsub);
	for (k = 0; k < DMAX_DIMS; k++) {
		hml__dbuf_printf(o, ", (int64_t)(");
		if (k < a->nsub)
			hml__dbuf_put(o, src + a->sub[k].hi.s, a->sub[k].hi.e - a->sub[k].hi.s);
		else
			hml__dbuf_printf(o, "0");
		hml__dbuf_printf(o, ")");
	}
	hml__dbuf_printf(o, "));");
	return o->oom ? hml__error_oom() : 0;
}

int hml__demit_qoi(demit *m, const ddirective *d)
{
	const char *src = m->src;
	const darray *a = &d->qoi.arg[0];
	const dslice *sl = &a->sub[0];
	dbuf *o = m->out;
	int n = (int)(a->base.e - a->base.s), k, slice = 0;

	for (k = 0; k < a->nsub; k++) {
		if (a->sub[k].hi.s == a->sub[k].hi.e)
			return hml__directive_error(src, m->path, &a->sub[k].at, "a slice needs its upper bound");
		if (a->nsub > 1 && a->sub[k].lo.s < a->sub[k].lo.e && !span_is_zero(src, a->sub[k].lo))
			slice = 1;
		if (sl->step.s < sl->step.e || a->sub[k].step.s < a->sub[k].step.e)
			return hml__directive_error(src, m->path, &a->sub[k].at,
				"a quantity of interest takes no step: [lo:hi]");
	}
	if (slice)   /* from its declared rows: emit.c, which knows shapes */
		return hml__demit_qoi_slice(m, d);
	if (a->nsub > 1)
		return emit_qoi_nd(m, d);
	hml__dbuf_printf(o, "hml__dir_ck(hml_dir_qoi(\"");
	hml__dbuf_cstr(o, m->path, strlen(m->path));
	hml__dbuf_printf(o, ":%d\", ", d->at.line);
	if (d->qoi_name.s < d->qoi_name.e)
		hml__dput_span_or(o, src, d->qoi_name, "(", ")", "");
	else
		hml__dbuf_printf(o, "\"%.*s\"", n, src + a->base.s);
	hml__dbuf_printf(o, ", &(%.*s)[", n, src + a->base.s);
	hml__dput_span_or(o, src, sl->lo, "", "", "0");
	hml__dbuf_printf(o, "], HML__DIR_DT(&(%.*s)[0]), 1, (int64_t)(", n, src + a->base.s);
	hml__dbuf_put(o, src + sl->hi.s, sl->hi.e - sl->hi.s);
	hml__dbuf_printf(o, ") - (int64_t)(");
	hml__dput_span_or(o, src, sl->lo, "", "", "0");
	hml__dbuf_printf(o, "), 0, 0, 0));");
	return o->oom ? hml__error_oom() : 0;
}
