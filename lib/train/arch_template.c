/*
 * lib/train/arch_template.c - the expansion of a model family's
 * TorchScript template (models/FAMILY.ts) for a parsed arch and layout
 * (hml__arch_expand, lib/train/arch.h); the template syntax is documented
 * in models/mlp.ts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/util.h"
#include "train/arch.h"

/* The TorchScript function of each activation, hml__arch_activations' order. */
static const char *const act_fn[HML__ARCH_NACT] = {
	"torch.relu", "torch.tanh", "torch.gelu", "torch.silu", "torch.sigmoid"
};

enum { NVARS = 32 };

typedef struct expander {
	char **lines;
	size_t nlines;
	const char *names[NVARS];
	char values[NVARS][32];
	size_t nvars;
	int nhidden;
	char *out;
	size_t len, cap;
	char err[160];
} expander;

static void set_var(expander *t, const char *name, const char *fmt, long long v)
{
	t->names[t->nvars] = name;
	snprintf(t->values[t->nvars++], sizeof(t->values[0]), fmt, v);
}

static const char *get_var(const expander *t, const char *name, size_t len)
{
	for (size_t k = 0; k < t->nvars; k++)
		if (strlen(t->names[k]) == len && strncmp(t->names[k], name, len) == 0)
			return t->values[k];
	return NULL;
}

static int emit(expander *t, const char *s, size_t n)
{
	if (t->len + n + 1 > t->cap) {
		size_t cap = (t->cap ? t->cap * 2 : 4096) + n;
		char *p = realloc(t->out, cap);

		if (!p)
			return -1;
		t->out = p;
		t->cap = cap;
	}
	memcpy(t->out + t->len, s, n);
	t->len += n;
	t->out[t->len] = '\0';
	return 0;
}

/* One line with {name} and {i} replaced; -1 with t->err set on failure. */
static int substitute(expander *t, size_t ln, int index, const char *line)
{
	const char *p = line, *open, *close, *v;
	char num[32];

	while ((open = strchr(p, '{'))) {
		if (emit(t, p, (size_t)(open - p)) < 0)
			return -2;
		if (!(close = strchr(open, '}'))) {
			snprintf(t->err, sizeof(t->err), "unclosed '{' on line %zu", ln + 1);
			return -1;
		}
		if (close - open == 2 && open[1] == 'i' && index >= 0) {
			snprintf(num, sizeof(num), "%d", index);
			v = num;
		} else if (!(v = get_var(t, open + 1, (size_t)(close - open - 1)))) {
			snprintf(t->err, sizeof(t->err), "unknown variable '{%.*s}' on line %zu",
			         (int)(close - open - 1), open + 1, ln + 1);
			return -1;
		}
		if (emit(t, v, strlen(v)) < 0)
			return -2;
		p = close + 1;
	}
	return emit(t, p, strlen(p)) < 0 || emit(t, "\n", 1) < 0 ? -2 : 0;
}

/* Lines from *i up to the @end closing this block (or the end at top
 * level). 0, -1 (t->err says why) or -2 (out of memory). */
static int expand_block(expander *t, size_t *i, int index, int on, int top)
{
	int rc;

	while (*i < t->nlines) {
		const char *line = t->lines[*i];

		if (strncmp(line, "@repeat", 7) == 0) {
			size_t start = ++*i;

			if (strcmp(line, "@repeat hidden") != 0) {
				snprintf(t->err, sizeof(t->err), "unknown directive '%s' on line %zu", line, start);
				return -1;
			}
			if ((t->nhidden == 0 || !on) && (rc = expand_block(t, i, -1, 0, 0)) < 0)
				return rc;
			for (int k = 0; on && k < t->nhidden; k++) {
				*i = start;
				if ((rc = expand_block(t, i, k, 1, 0)) < 0)
					return rc;
			}
			++*i;
		} else if (strncmp(line, "@if ", 4) == 0) {
			const char *v = get_var(t, line + 4, strlen(line + 4));
			int cond = v && *v && strcmp(v, "0") != 0;

			++*i;
			if ((rc = expand_block(t, i, index, on && cond, 0)) < 0)
				return rc;
			++*i;
		} else if (strcmp(line, "@end") == 0) {
			if (top) {
				snprintf(t->err, sizeof(t->err), "@end without a block on line %zu", *i + 1);
				return -1;
			}
			return 0;
		} else if (line[0] == '@') {
			snprintf(t->err, sizeof(t->err), "unknown directive '%s' on line %zu", line, *i + 1);
			return -1;
		} else {
			if (on && line[0] != '#' && (rc = substitute(t, *i, index, line)) < 0)
				return rc;
			++*i;
		}
	}
	if (!top) {
		snprintf(t->err, sizeof(t->err), "a block has no @end");
		return -1;
	}
	return 0;
}

static void set_vars(expander *t, const hml__arch *a, const hml__arch_layout *l)
{
	char dp[64];

	t->names[t->nvars] = "act";
	snprintf(t->values[t->nvars++], sizeof(t->values[0]), "%s", act_fn[a->act_index]);
	hml__arch_format_double(dp, sizeof(dp), a->dropout);
	if (!strpbrk(dp, ".e"))
		strcat(dp, ".0");
	t->names[t->nvars] = "dropout";
	snprintf(t->values[t->nvars++], sizeof(t->values[0]), "%.31s", a->dropout > 0 ? dp : "0");
	set_var(t, "in_features", "%lld", (long long)l->in_features);
	set_var(t, "out_features", "%lld", (long long)l->out_features);
	set_var(t, "log_output", "%lld", (long long)l->log_output);
	set_var(t, "categorical", "%lld", (long long)(l->ncategorical > 0));
	set_var(t, "onehot_features", "%lld", (long long)l->onehot_features);
	if (a->cnn) {
		set_var(t, "in_channels", "%lld", (long long)l->core_in[0]);
		set_var(t, "out_channels", "%lld", (long long)l->core_out[0]);
		set_var(t, "height", "%lld", (long long)l->core_in[1]);
		set_var(t, "width", "%lld", (long long)l->core_in[2]);
		set_var(t, "kernel", "%lld", (long long)a->kernel);
		set_var(t, "pad", "%lld", (long long)(a->kernel / 2));
		set_var(t, "residual", "%lld", (long long)a->residual);
	}
	if (a->vec) {
		set_var(t, "pool", "%lld", (long long)a->pool);
		set_var(t, "pooled", "%lld", (long long)(a->pool > 1));
		set_var(t, "head", "%lld", (long long)a->head);
		set_var(t, "flat_features", "%lld", (long long)l->flat_features);
		set_var(t, "spatial", "%lld", (long long)a->spatial);
		set_var(t, "last", "%lld", (long long)(a->nwidths - 1));
		set_var(t, "map_height", "%lld", (long long)l->map_height);
		set_var(t, "map_width", "%lld", (long long)l->map_width);
	}
}

int hml__arch_expand(char **out, const hml__arch *a, const hml__arch_layout *l)
{
	expander t;
	char *src = NULL, *p;
	size_t i = 0, n = 1;
	int rc = 0;

	*out = NULL;
	memset(&t, 0, sizeof(t));
	if (!(src = hml__strdup(a->template_src)))
		return hml__error_oom();
	for (p = src; *p; p++)
		n += *p == '\n';
	if (!(t.lines = calloc(n, sizeof(*t.lines)))) {
		rc = hml__error_oom();
		goto done;
	}
	/* Lines as std::getline gives them: a final newline ends the last. */
	for (p = src; *p;) {
		char *nl = strchr(p, '\n');

		t.lines[t.nlines++] = p;
		if (!nl)
			break;
		*nl = '\0';
		p = nl + 1;
	}
	set_vars(&t, a, l);
	t.nhidden = a->nwidths - a->spatial;   /* spatial: the last is written out */
	if ((rc = expand_block(&t, &i, -1, 1, 1)) == -2 || (rc == 0 && emit(&t, "", 0) < 0))
		rc = hml__error_oom();
	else if (rc < 0)
		rc = hml__error_set(HML_EMODEL, "models/%s.ts: %s", a->family, t.err);
done:
	if (rc == 0) {
		*out = t.out;
		t.out = NULL;
	}
	free(t.out);
	free(t.lines);
	free(src);
	return rc;
}
