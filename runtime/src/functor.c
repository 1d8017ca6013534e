/*
 * Tensor functors and domains: a hand-written recursive-descent parser.
 *
 *   functor := [ NAME ':' ] lhs '=' rhs
 *   lhs     := '[' dim (',' dim)* ']'      indices first, then ranges [NAME '='] a:b
 *   rhs     := '(' piece (',' piece)* ')' | piece
 *   piece   := '[' sub (',' sub)* ']'
 *   sub     := expr [ ':' expr [ ':' expr ] ] | FEATURE-NAME
 *   expr    := term (('+' | '-') term)*
 *   term    := unary ('*' unary)*
 *   unary   := ('-' | '+') unary | primary
 *   primary := INTEGER | NAME | '(' expr ')'
 *   domain  := slice (',' slice)*,  slice := expr ':' expr [ ':' expr ]
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/util.h"
#include "functor_internal.h"

/* Parentheses and unary signs recurse; a bound keeps hostile input from
 * exhausting the stack. */
#define MAX_DEPTH 200
#define CLIP_MAX 120

enum tok_kind { TOK_END, TOK_INT, TOK_NAME, TOK_PUNCT, TOK_BAD };

typedef struct token {
	int kind;
	int begin, end;      /* byte offsets */
	char ch;             /* TOK_PUNCT */
	int64_t value;       /* TOK_INT */
	int overflow;        /* TOK_INT too large */
} token;

typedef struct parser {
	const char *text;
	const char *kind;    /* "functor" or "domain" */
	token tok;
	hml__exprs *x;
	char **indices;      /* sample indices known so far (functors only) */
	int nindices;
	char **fnames;       /* named feature dimensions (functors only) */
	int nfeatures;
	int no_index;        /* inside a left-hand range: indices are errors */
	int depth;
} parser;

static void lex(const char *s, int pos, token *t)
{
	unsigned char c;

	while (s[pos] && isspace((unsigned char)s[pos]))
		pos++;
	memset(t, 0, sizeof(*t));
	t->begin = pos;
	c = (unsigned char)s[pos];
	if (!c) {
		t->kind = TOK_END;
		t->end = pos;
	} else if (c >= '0' && c <= '9') {
		t->kind = TOK_INT;
		while (s[pos] >= '0' && s[pos] <= '9') {
			int d = s[pos] - '0';
			if (t->value > (INT64_MAX - d) / 10)
				t->overflow = 1;
			else
				t->value = t->value * 10 + d;
			pos++;
		}
		t->end = pos;
	} else if (c == '_' || isalpha(c)) {
		t->kind = TOK_NAME;
		while (s[pos] == '_' || isalnum((unsigned char)s[pos]))
			pos++;
		t->end = pos;
	} else if (strchr("[](),:=+-*", c)) {
		t->kind = TOK_PUNCT;
		t->ch = (char)c;
		t->end = pos + 1;
	} else {
		/* One character, with the continuation bytes of a UTF-8 sequence. */
		t->kind = TOK_BAD;
		pos++;
		while (((unsigned char)s[pos] & 0xC0) == 0x80)
			pos++;
		t->end = pos;
	}
}

static void advance(parser *p)
{
	lex(p->text, p->tok.end, &p->tok);
}

static int is_punct(const token *t, char ch)
{
	return t->kind == TOK_PUNCT && t->ch == ch;
}

void hml__clip(char *buf, size_t size, const char *text)
{
	size_t n, i;

	if (size == 0)
		return;
	if (!text)
		text = "";
	n = strlen(text);
	if (n > CLIP_MAX && size > CLIP_MAX + 4) {
		memcpy(buf, text, CLIP_MAX - 3);
		memcpy(buf + CLIP_MAX - 3, "...", 4);
	} else {
		snprintf(buf, size, "%s", text);
	}
	for (i = 0; buf[i]; i++)
		if (buf[i] == '\n' || buf[i] == '\r' || buf[i] == '\t' ||
		    buf[i] == '\v' || buf[i] == '\f')
			buf[i] = ' ';
}

/* "expected <what> but found <found>", where `found` is the source text in
 * [begin, end) (quoted, after `prefix`) or "end of input" when empty. */
static int fail_span(const parser *p, int begin, int end, const char *what,
                     const char *prefix)
{
	char txt[CLIP_MAX + 8], found[96], span[64];
	int len = end - begin;
	size_t i;

	hml__clip(txt, sizeof(txt), p->text);
	if (len <= 0) {
		snprintf(found, sizeof(found), "end of input");
	} else {
		if (len > 40)
			snprintf(span, sizeof(span), "%.37s...", p->text + begin);
		else
			snprintf(span, sizeof(span), "%.*s", len, p->text + begin);
		for (i = 0; span[i]; i++)
			if (isspace((unsigned char)span[i]))
				span[i] = ' ';
		snprintf(found, sizeof(found), "%s'%s'", prefix, span);
	}
	return hml__error_set(HML_ESYNTAX, "%s '%s': column %d: expected %s but found %s",
	                      p->kind, txt, begin + 1, what, found);
}

static int fail(const parser *p, const token *at, const char *what)
{
	return fail_span(p, at->begin, at->end, what, "");
}

static int expect(parser *p, char ch)
{
	char what[8];

	if (!is_punct(&p->tok, ch)) {
		snprintf(what, sizeof(what), "'%c'", ch);
		return fail(p, &p->tok, what);
	}
	advance(p);
	return 0;
}

static int node_new(parser *p, int op, int a, int b, int64_t value,
                    int begin, int end)
{
	hml__exprs *x = p->x;
	hml__node *n;

	if (x->n == x->cap) {
		int cap = x->cap ? 2 * x->cap : 32;
		hml__node *grown = realloc(x->nodes, (size_t)cap * sizeof(*grown));
		if (!grown)
			return hml__error_oom();
		x->nodes = grown;
		x->cap = cap;
	}
	n = &x->nodes[x->n];
	n->op = op;
	n->a = a;
	n->b = b;
	n->value = value;
	n->begin = begin;
	n->end = end;
	n->has_index = op == HML__IDX ||
	               (a >= 0 && x->nodes[a].has_index) ||
	               (b >= 0 && x->nodes[b].has_index);
	return x->n++;
}

/* The slot of symbol `name` (length len), added when new. */
static int symbol_slot(parser *p, const char *name, int len)
{
	hml__exprs *x = p->x;
	char *copy;
	int k;

	for (k = 0; k < x->nsyms; k++)
		if ((int)strlen(x->syms[k]) == len && !strncmp(x->syms[k], name, (size_t)len))
			return k;
	if (x->nsyms == x->symcap) {
		int cap = x->symcap ? 2 * x->symcap : 8;
		char **grown = realloc(x->syms, (size_t)cap * sizeof(*grown));
		if (!grown)
			return hml__error_oom();
		x->syms = grown;
		x->symcap = cap;
	}
	if (!(copy = malloc((size_t)len + 1)))
		return hml__error_oom();
	memcpy(copy, name, (size_t)len);
	copy[len] = '\0';
	x->syms[x->nsyms] = copy;
	return x->nsyms++;
}

static int index_of(const parser *p, const char *name, int len)
{
	int k;

	for (k = 0; k < p->nindices; k++)
		if ((int)strlen(p->indices[k]) == len && !strncmp(p->indices[k], name, (size_t)len))
			return k;
	return -1;
}

/* The ordinal of the named feature dimension `name`, or -1. */
static int feature_of(const parser *p, const char *name, int len)
{
	int k;

	for (k = 0; k < p->nfeatures; k++)
		if (p->fnames[k] && (int)strlen(p->fnames[k]) == len && !strncmp(p->fnames[k], name, (size_t)len))
			return k;
	return -1;
}

static int parse_expr(parser *p);

static int parse_primary(parser *p)
{
	token t = p->tok;
	int e, k;

	if (t.kind == TOK_INT) {
		if (t.overflow)
			return fail(p, &t, "an integer below 2^63");
		advance(p);
		return node_new(p, HML__NUM, -1, -1, t.value, t.begin, t.end);
	}
	if (t.kind == TOK_NAME) {
		const char *name = p->text + t.begin;
		int len = t.end - t.begin;

		if (feature_of(p, name, len) >= 0)
			return fail(p, &t, "an expression, not a feature dimension's name (it stands alone as a subscript)");
		if ((k = index_of(p, name, len)) >= 0) {
			if (p->no_index)
				return fail(p, &t, "an expression without sample indices");
			advance(p);
			return node_new(p, HML__IDX, -1, -1, k, t.begin, t.end);
		}
		if ((k = symbol_slot(p, name, len)) < 0)
			return k;
		advance(p);
		return node_new(p, HML__SYM, -1, -1, k, t.begin, t.end);
	}
	if (is_punct(&t, '(')) {
		advance(p);
		if ((e = parse_expr(p)) < 0)
			return e;
		if (!is_punct(&p->tok, ')'))
			return fail(p, &p->tok, "')'");
		/* The parenthesised span, for messages about the product it is in. */
		p->x->nodes[e].begin = t.begin;
		p->x->nodes[e].end = p->tok.end;
		advance(p);
		return e;
	}
	return fail(p, &t, "an expression");
}

static int parse_unary(parser *p)
{
	token t = p->tok;
	int e;

	if (++p->depth > MAX_DEPTH) {
		e = fail(p, &t, "an expression nested less deeply");
		goto done;
	}
	if (is_punct(&t, '-') || is_punct(&t, '+')) {
		advance(p);
		if ((e = parse_unary(p)) < 0)
			goto done;
		if (t.ch == '-')
			e = node_new(p, HML__NEG, e, -1, 0, t.begin, p->x->nodes[e].end);
		goto done;
	}
	e = parse_primary(p);
done:
	p->depth--;
	return e;
}

static int parse_term(parser *p)
{
	int l, r;

	if ((l = parse_unary(p)) < 0)
		return l;
	while (is_punct(&p->tok, '*')) {
		advance(p);
		if ((r = parse_unary(p)) < 0)
			return r;
		if (p->x->nodes[l].has_index && p->x->nodes[r].has_index)
			return fail_span(p, p->x->nodes[l].begin, p->x->nodes[r].end,
			                 "an affine expression", "non-affine expression ");
		if ((l = node_new(p, HML__MUL, l, r, 0, p->x->nodes[l].begin,
		                  p->x->nodes[r].end)) < 0)
			return l;
	}
	return l;
}

static int parse_expr(parser *p)
{
	int l, r, op;

	if ((l = parse_term(p)) < 0)
		return l;
	while (is_punct(&p->tok, '+') || is_punct(&p->tok, '-')) {
		op = p->tok.ch == '+' ? HML__ADD : HML__SUB;
		advance(p);
		if ((r = parse_term(p)) < 0)
			return r;
		if ((l = node_new(p, op, l, r, 0, p->x->nodes[l].begin,
		                  p->x->nodes[r].end)) < 0)
			return l;
	}
	return l;
}

/* '[' dim (',' dim)* ']': sample indices first, then ranges a:b. */
static int parse_lhs(parser *p, hml_functor *fn)
{
	token next;
	int rc, len;

	if ((rc = expect(p, '[')) < 0)
		return rc;
	for (;;) {
		token t = p->tok;

		lex(p->text, t.end, &next);
		if (t.kind == TOK_NAME && (is_punct(&next, ',') || is_punct(&next, ']'))) {
			len = t.end - t.begin;
			if (fn->nfeatures > 0)
				return fail(p, &t, "a feature range 'a:b' (sample indices come first)");
			if (index_of(p, p->text + t.begin, len) >= 0)
				return fail(p, &t, "a distinct index name");
			if (fn->nindices == HML_MAX_DIMS)
				return fail(p, &t, "at most 8 sample indices");
			if (!(fn->indices[fn->nindices] = malloc((size_t)len + 1)))
				return hml__error_oom();
			memcpy(fn->indices[fn->nindices], p->text + t.begin, (size_t)len);
			fn->indices[fn->nindices][len] = '\0';
			fn->nindices++;
			p->indices = fn->indices;
			p->nindices = fn->nindices;
			advance(p);
		} else {
			int start, stop;

			if (fn->nfeatures == HML_MAX_DIMS)
				return fail(p, &t, "at most 8 feature dimensions");
			if (t.kind == TOK_NAME && is_punct(&next, '=')) {
				/* a named feature dimension: "t = 0:T" */
				len = t.end - t.begin;
				if (index_of(p, p->text + t.begin, len) >= 0 ||
				    feature_of(p, p->text + t.begin, len) >= 0)
					return fail(p, &t, "a distinct feature name");
				if (!(fn->fnames[fn->nfeatures] = malloc((size_t)len + 1)))
					return hml__error_oom();
				memcpy(fn->fnames[fn->nfeatures], p->text + t.begin, (size_t)len);
				fn->fnames[fn->nfeatures][len] = '\0';
				advance(p);
				advance(p);
			}
			p->no_index = 1;
			if ((start = parse_expr(p)) < 0)
				return start;
			if (!is_punct(&p->tok, ':'))
				return fail(p, &p->tok, "':'");
			advance(p);
			if ((stop = parse_expr(p)) < 0)
				return stop;
			p->no_index = 0;
			fn->fstart[fn->nfeatures] = start;
			fn->fstop[fn->nfeatures] = stop;
			fn->nfeatures++;
			p->fnames = fn->fnames;
			p->nfeatures = fn->nfeatures;
		}
		if (is_punct(&p->tok, ',')) {
			advance(p);
			continue;
		}
		if (!is_punct(&p->tok, ']'))
			return fail(p, &p->tok, "']'");
		if (fn->nfeatures == 0)
			return fail(p, &p->tok, "a feature range 'a:b'");
		advance(p);
		return 0;
	}
}

static int parse_piece(parser *p, hml_functor *fn)
{
	hml__piece *pc;

	if (!is_punct(&p->tok, '['))
		return fail(p, &p->tok, "'['");
	if (fn->npieces == fn->piececap) {
		int cap = fn->piececap ? 2 * fn->piececap : 8;
		hml__piece *grown = realloc(fn->pieces, (size_t)cap * sizeof(*grown));
		if (!grown)
			return hml__error_oom();
		fn->pieces = grown;
		fn->piececap = cap;
	}
	pc = &fn->pieces[fn->npieces];
	memset(pc, 0, sizeof(*pc));
	pc->begin = p->tok.begin;
	advance(p);
	for (;;) {
		hml__sub s = { 0, -1, -1, -1, -1 };
		token next;
		int k;

		if (pc->nsubs == HML_MAX_DIMS)
			return fail(p, &p->tok, "at most 8 subscripts");
		lex(p->text, p->tok.end, &next);
		if (p->tok.kind == TOK_NAME && (is_punct(&next, ',') || is_punct(&next, ']')) &&
		    (k = feature_of(p, p->text + p->tok.begin, p->tok.end - p->tok.begin)) >= 0) {
			/* the named feature dimension k: its range, placed at k */
			s.is_range = 1;
			s.start = fn->fstart[k];
			s.stop = fn->fstop[k];
			s.feat = k;
			advance(p);
		} else if ((s.start = parse_expr(p)) < 0)
			return s.start;
		if (is_punct(&p->tok, ':')) {
			s.is_range = 1;
			advance(p);
			if ((s.stop = parse_expr(p)) < 0)
				return s.stop;
			if (is_punct(&p->tok, ':')) {
				advance(p);
				if ((s.step = parse_expr(p)) < 0)
					return s.step;
			}
		}
		pc->subs[pc->nsubs++] = s;
		if (is_punct(&p->tok, ']'))
			break;
		if (!is_punct(&p->tok, ','))
			return fail(p, &p->tok, "']'");
		advance(p);
	}
	pc->end = p->tok.end;
	advance(p);
	fn->npieces++;
	return 0;
}

static int parse_rhs(parser *p, hml_functor *fn)
{
	int rc;

	if (is_punct(&p->tok, '['))
		return parse_piece(p, fn);
	if (!is_punct(&p->tok, '('))
		return fail(p, &p->tok, "'(' or '['");
	advance(p);
	for (;;) {
		if ((rc = parse_piece(p, fn)) < 0)
			return rc;
		if (is_punct(&p->tok, ')'))
			break;
		if (!is_punct(&p->tok, ','))
			return fail(p, &p->tok, "')'");
		advance(p);
	}
	advance(p);
	return 0;
}

static void exprs_release(hml__exprs *x)
{
	int k;

	for (k = 0; k < x->nsyms; k++)
		free(x->syms[k]);
	free(x->syms);
	free(x->nodes);
	memset(x, 0, sizeof(*x));
}

int hml_functor_parse(hml_functor **out, const char *text)
{
	hml_functor *fn = NULL;
	parser p;
	int rc = 0;

	if (!out)
		return hml__error_set(HML_EINVALID, "hml_functor_parse: no output pointer");
	*out = NULL;
	if (!text)
		return hml__error_set(HML_EINVALID, "hml_functor_parse: no functor text");
	if (!(fn = calloc(1, sizeof(*fn))))
		return hml__error_oom();
	if (!(fn->text = hml__strdup(text))) {
		rc = HML_ENOMEM;
		goto done;
	}
	memset(&p, 0, sizeof(p));
	p.text = fn->text;
	p.kind = "functor";
	p.x = &fn->x;
	lex(p.text, 0, &p.tok);

	if (p.tok.kind == TOK_NAME) {
		int len = p.tok.end - p.tok.begin;

		if (!(fn->name = malloc((size_t)len + 1))) {
			rc = hml__error_oom();
			goto done;
		}
		memcpy(fn->name, p.text + p.tok.begin, (size_t)len);
		fn->name[len] = '\0';
		advance(&p);
		if ((rc = expect(&p, ':')) < 0)
			goto done;
	}
	if ((rc = parse_lhs(&p, fn)) < 0)
		goto done;
	if ((rc = expect(&p, '=')) < 0)
		goto done;
	if ((rc = parse_rhs(&p, fn)) < 0)
		goto done;
	if (p.tok.kind != TOK_END) {
		rc = fail(&p, &p.tok, "end of input");
		goto done;
	}
	*out = fn;
	fn = NULL;
	rc = 0;
done:
	hml_functor_free(fn);
	return rc;
}

void hml_functor_free(hml_functor *fn)
{
	int k;

	if (!fn)
		return;
	for (k = 0; k < fn->nindices; k++)
		free(fn->indices[k]);
	for (k = 0; k < HML_MAX_DIMS; k++)
		free(fn->fnames[k]);
	free(fn->pieces);
	exprs_release(&fn->x);
	free(fn->name);
	free(fn->text);
	free(fn);
}

const char *hml_functor_text(const hml_functor *fn)
{
	return fn ? fn->text : "";
}

int hml_functor_npieces(const hml_functor *fn)
{
	return fn ? fn->npieces : 0;
}

int hml_functor_nindices(const hml_functor *fn)
{
	return fn ? fn->nindices : 0;
}

int hml__domain_parse(hml__domain *out, const char *text)
{
	parser p;
	int rc = 0, start, stop, step;

	memset(out, 0, sizeof(*out));
	memset(&p, 0, sizeof(p));
	p.text = text ? text : "";
	p.kind = "domain";
	p.x = &out->x;
	lex(p.text, 0, &p.tok);
	for (;;) {
		step = -1;
		if ((start = parse_expr(&p)) < 0)
			return start;
		if (!is_punct(&p.tok, ':'))
			return fail(&p, &p.tok, "':'");
		advance(&p);
		if ((stop = parse_expr(&p)) < 0)
			return stop;
		if (is_punct(&p.tok, ':')) {
			advance(&p);
			if ((step = parse_expr(&p)) < 0)
				return step;
		}
		if (out->nslices < HML_MAX_DIMS) {
			out->start[out->nslices] = start;
			out->stop[out->nslices] = stop;
			out->step[out->nslices] = step;
		}
		out->nslices++;
		if (p.tok.kind == TOK_END)
			break;
		if (!is_punct(&p.tok, ','))
			return fail(&p, &p.tok, "','");
		advance(&p);
	}
	return rc;
}

void hml__domain_release(hml__domain *d)
{
	if (d)
		exprs_release(&d->x);
}

int hml__exprs_resolve(const hml__exprs *x, const hml_symbol *symbols,
                       size_t nsymbols, int64_t *values,
                       const char *kind, const char *text)
{
	char txt[CLIP_MAX + 8];
	size_t i;
	int k;

	for (k = 0; k < x->nsyms; k++) {
		for (i = 0; i < nsymbols; i++)
			if (symbols[i].name && !strcmp(symbols[i].name, x->syms[k]))
				break;
		if (i == nsymbols) {
			hml__clip(txt, sizeof(txt), text);
			return hml__error_set(HML_EINVALID, "unknown symbol '%s' in %s '%s'",
			                      x->syms[k], kind, txt);
		}
		values[k] = symbols[i].value;
	}
	return 0;
}

int hml__affine_is_const(const hml__affine *a)
{
	int k;

	for (k = 0; k < HML_MAX_DIMS; k++)
		if (a->c[k])
			return 0;
	return 1;
}

/* r = a * s, coefficient-wise; nonzero on overflow. */
static int scale(hml__affine *r, const hml__affine *a, int64_t s)
{
	int k, ovf = HML__MUL_OVF(a->c0, s, &r->c0);

	for (k = 0; k < HML_MAX_DIMS; k++)
		ovf |= HML__MUL_OVF(a->c[k], s, &r->c[k]);
	return ovf;
}

int hml__exprs_eval(const hml__exprs *x, const int64_t *symvals,
                    hml__affine *vals, const char *kind, const char *text)
{
	char txt[CLIP_MAX + 8];
	int i, k, ovf;

	for (i = 0; i < x->n; i++) {
		const hml__node *n = &x->nodes[i];
		hml__affine *r = &vals[i];
		const hml__affine *a = n->a >= 0 ? &vals[n->a] : NULL;
		const hml__affine *b = n->b >= 0 ? &vals[n->b] : NULL;

		memset(r, 0, sizeof(*r));
		ovf = 0;
		switch (n->op) {
		case HML__NUM:
			r->c0 = n->value;
			break;
		case HML__IDX:
			r->c[n->value] = 1;
			break;
		case HML__SYM:
			r->c0 = symvals[n->value];
			break;
		case HML__NEG:
			ovf = scale(r, a, -1);
			break;
		case HML__ADD:
		case HML__SUB:
			if (n->op == HML__ADD)
				ovf = HML__ADD_OVF(a->c0, b->c0, &r->c0);
			else
				ovf = HML__SUB_OVF(a->c0, b->c0, &r->c0);
			for (k = 0; k < HML_MAX_DIMS; k++) {
				if (n->op == HML__ADD)
					ovf |= HML__ADD_OVF(a->c[k], b->c[k], &r->c[k]);
				else
					ovf |= HML__SUB_OVF(a->c[k], b->c[k], &r->c[k]);
			}
			break;
		case HML__MUL:
			/* The parser let at most one side name an index. */
			if (hml__affine_is_const(a))
				ovf = scale(r, b, a->c0);
			else
				ovf = scale(r, a, b->c0);
			break;
		default:
			break;
		}
		if (ovf) {
			hml__clip(txt, sizeof(txt), text);
			return hml__error_set(HML_EINVALID,
				"%s '%s': the expression at column %d overflows 64-bit integers",
				kind, txt, n->begin + 1);
		}
	}
	return 0;
}
