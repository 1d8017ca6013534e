/*
 * runtime/src/tmap_layout.h - a bound tensor map's layout, shared by the
 * binding (tmap.c), which computes it, and the copies (tmap_copy.c), which
 * walk it (private to those two files).
 */
#ifndef HML_TMAP_LAYOUT_H
#define HML_TMAP_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "hml/tensor.h"

/* Room for a functor's text clipped for a message. */
#define TEXT_MAX 128

typedef struct tpiece {
	int64_t base;                     /* element offset of row 0, block element 0 */
	int64_t sstride[HML_MAX_DIMS];    /* per loop dimension */
	int64_t bext[HML_MAX_DIMS];       /* block, left-padded to the feature rank */
	int64_t bstride[HML_MAX_DIMS];
	int64_t col;                      /* first column in the last feature dimension */
} tpiece;

struct hml_tmap {
	char *text;                       /* functor text */
	char *domain;                     /* resolved domain, e.g. "1:99, 1:199" */
	hml_array *arrays;                /* descriptors, names copied */
	void **base;                      /* data as bound or last set (hml_tmap_seek) */
	size_t narrays;
	tpiece *pieces;
	int nloop;                        /* domain dimensions after merging, >= 1 */
	int64_t lext[HML_MAX_DIMS];
	int64_t rows;
	int nf;
	int64_t fshape[HML_MAX_DIMS];
	int64_t row_size;
	int64_t nlines;                   /* row_size / last feature extent */
	hml_dtype dtype;
};

/* "'name'" of array k of a map, or "#k" when it has none, for messages. */
void hml__tmap_array_label(char *buf, size_t size, const hml_array *a, size_t k);

#endif
