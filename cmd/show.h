/*
 * cmd/show.h - what the files of hml show (cmd/show.c: the listing, one
 * record) share: the tables drawn on stdout (cmd/show_table.c) and the
 * searches, listed and one by one (cmd/show_search.c).
 */
#ifndef HML_CMD_SHOW_H
#define HML_CMD_SHOW_H

#include <stddef.h>

#include <jansson.h>

#include "store/store.h"

#define TABLE_COLS 9

typedef struct show_table {
	int ncols;
	const char *head[TABLE_COLS];
	char **cells;     /* nrows * ncols, malloc'ed strings */
	size_t nrows, cap;
} show_table;

/* A copy of `s` fit for one cell (malloc'ed, NULL when out of memory):
 * control characters become '?', an empty or NULL string "-". */
char *show_table_cell(const char *s);

/* Append a row of t->ncols values (copied). 0, or HML_ENOMEM. */
int show_table_row(show_table *t, const char *const *vals);

/* "title:", then the table with its head, columns aligned ("  (none)"
 * when it has no row). */
void show_table_print(const show_table *t, const char *title);
void show_table_release(show_table *t);

/* The "searches" table of the listing (cmd/show_search.c). */
int show_search_list(hml__store *s);

/* A search record as readers see it: its status hml__search_status's (a
 * search left "running" by kill -9 is "interrupted"). New reference. */
json_t *show_search_record(const hml__store *s, const json_t *rec);

/* hml show sN: the search's front, counts and plots (--json: its record,
 * results and plots); with `plot`, its plots drawn again first. */
int show_search_one(hml__store *s, const char *id, int plot);

#endif
