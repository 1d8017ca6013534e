/*
 * lib/directive/cdecl.h - the C declaration of an array a region reads
 * (internal): how many array dimensions the declaration in scope before a
 * directive gives it, so that the code of the directive may take the
 * array's row lengths from its type (sizeof) instead of from the slices.
 */
#ifndef HML_DIRECTIVE_CDECL_H
#define HML_DIRECTIVE_CDECL_H

#include <stddef.h>

/*
 * The declaration of the identifier `name` (n bytes) nearest before offset
 * `upto` of src and in scope there, recognised in the forms
 *   TYPE name[D0][D1]...      (an array, a VLA, a parameter T name[][M])
 *   TYPE (*name)[D1]...       (a pointer to arrays)
 * Returns its number of dimensions (D0 included), 0 when the nearest such
 * declaration is not an array (TYPE name, TYPE *restrict name) or there is
 * none. A pointer declared `TYPE *name` is not recognised as a
 * declaration: it neither is nor hides an array. `member`: name is a
 * structure's member (p->name): its last declaration, in any scope.
 */
int hml__dcdecl_dims(const char *src, size_t upto, const char *name, size_t n, int member);

#endif
