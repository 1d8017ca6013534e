/*
 * lib/directive/prelude_slice.c - the helper of `#pragma hml qoi` of a
 * slice that does not start at 0 (the interior of a field with halos):
 * carried, like the helpers of prelude.c, as a declaration before the first
 * directive and a definition at the end of the file, but only by a
 * translation that uses it. It gathers the slice's rows into one block and
 * records it through hml__dir_qoi(), so that its errors read as every
 * quantity of interest's.
 */
#include "directive/emit.h"

const char hml__dprelude_slice_head[] =
"static HML__DIR_UNUSED void hml__dir_qoi_slice(const char *where, const char *name,\n"
"\tconst void *data, hml_dtype dt, size_t size, int ndim, const int64_t *q);\n";

/* q: the array's extents (HML__DIR_ROWS: the first one unknown), the
 * slice's starts and its extents, four of each. */
const char hml__dprelude_slice_tail[] =
"static void hml__dir_qoi_slice(const char *where, const char *name,\n"
"\tconst void *data, hml_dtype dt, size_t size, int ndim, const int64_t *q)\n"
"{\n"
"\tconst int64_t *shape = q, *lo = q + 4, *n = q + 8;\n"
"\tint64_t rows = 1, i, k, off, r;\n"
"\tchar msg[300], *buf;\n"
"\tfor (k = 0; k < ndim; k++) {\n"
"\t\tif (lo[k] < 0 || n[k] < 0 || (shape[k] != HML__DIR_ROWS && lo[k] + n[k] > shape[k])) {\n"
"\t\t\tsnprintf(msg, sizeof(msg), \"quantity of interest '%s': the slice %lld:%lld of dimension %d \"\n"
"\t\t\t         \"is not inside the array's extent %lld\", name, (long long)lo[k],\n"
"\t\t\t         (long long)(lo[k] + n[k]), (int)k, (long long)shape[k]);\n"
"\t\t\thml__dir_fail(where, NULL, msg);\n"
"\t\t}\n"
"\t\tif (k < ndim - 1)\n"
"\t\t\trows *= n[k];\n"
"\t}\n"
"\tbuf = (char *)malloc(size * (size_t)(rows * n[ndim - 1]) + 1);\n"
"\tif (!buf)\n"
"\t\thml__dir_fail(where, NULL, \"cannot record the quantity of interest: out of memory\");\n"
"\tfor (i = 0; i < rows; i++) {\n"
"\t\t/* row i of the slice: its index in each leading dimension, row-major */\n"
"\t\tfor (r = i, off = 0, k = ndim - 2; k >= 0; k--) {\n"
"\t\t\tint64_t stride = 1, j;\n"
"\t\t\tfor (j = k + 1; j < ndim; j++)\n"
"\t\t\t\tstride *= shape[j];\n"
"\t\t\toff += (lo[k] + r % n[k]) * stride;\n"
"\t\t\tr /= n[k];\n"
"\t\t}\n"
"\t\tmemcpy(buf + (size_t)(i * n[ndim - 1]) * size,\n"
"\t\t       (const char *)data + (size_t)(off + lo[ndim - 1]) * size, size * (size_t)n[ndim - 1]);\n"
"\t}\n"
"\thml__dir_qoi(where, name, buf, dt, ndim, n[0], n[1], n[2], n[3]);\n"
"\tfree(buf);\n"
"}\n";
