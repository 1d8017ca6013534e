/*
 * cmd/show_table.c - the tables hml show draws on stdout (see show.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "show.h"

char *show_table_cell(const char *s)
{
	char *c = strdup(s && *s ? s : "-");

	for (char *p = c; p && *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return c;
}

int show_table_row(show_table *t, const char *const *vals)
{
	if (t->nrows == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 8;
		char **c = realloc(t->cells, cap * (size_t)t->ncols * sizeof(*c));

		if (!c)
			return hml__error_oom();
		t->cells = c;
		t->cap = cap;
	}
	for (int j = 0; j < t->ncols; j++) {
		char *c = show_table_cell(vals[j]);

		if (!c) {
			for (int k = 0; k < j; k++)
				free(t->cells[t->nrows * (size_t)t->ncols + (size_t)k]);
			return hml__error_oom();
		}
		t->cells[t->nrows * (size_t)t->ncols + (size_t)j] = c;
	}
	t->nrows++;
	return 0;
}

void show_table_print(const show_table *t, const char *title)
{
	size_t width[TABLE_COLS];

	printf("%s:\n", title);
	if (t->nrows == 0) {
		printf("  (none)\n");
		return;
	}
	for (int j = 0; j < t->ncols; j++) {
		width[j] = strlen(t->head[j]);
		for (size_t i = 0; i < t->nrows; i++) {
			size_t w = strlen(t->cells[i * (size_t)t->ncols + (size_t)j]);

			if (w > width[j])
				width[j] = w;
		}
	}
	for (size_t i = 0; i <= t->nrows; i++) {
		printf(" ");
		for (int j = 0; j < t->ncols; j++) {
			const char *c = i == 0 ? t->head[j] : t->cells[(i - 1) * (size_t)t->ncols + (size_t)j];

			if (j == t->ncols - 1)
				printf(" %s", c);
			else
				printf(" %-*s ", (int)width[j], c);
		}
		printf("\n");
	}
}

void show_table_release(show_table *t)
{
	for (size_t i = 0; i < t->nrows * (size_t)t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	t->cells = NULL;
	t->nrows = t->cap = 0;
}

