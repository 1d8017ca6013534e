/*
 * lib/store/ids.h - the one grammar of record ids (internal).
 *
 * Every id hml gives or reads -- of data sets (d1, d2, ...), models (m1),
 * deployments (p1), evaluations (e1), searches (s1), compiled models (c1)
 * and the trials of a search (t0, t1, ...: search/<id>/t<n>.pt) -- is one
 * prefix letter followed by a decimal number without leading zeros of at
 * most HML__ID_DIGITS digits: "m12", never "m012", "m", "M1", "m1.pt" or
 * "../m1". The writers (hml__store_add) make ids with hml__id_format and
 * the readers (the manifest's validation, the trial history's) check them
 * with hml__id_check, so that both sides hold one contract: an id read
 * from an experiment is always safe in a file name.
 */
#ifndef HML_LIB_IDS_H
#define HML_LIB_IDS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The most digits of an id's number (numbers below 10^9). */
#define HML__ID_DIGITS 9

/** An id's longest text, its NUL included. */
#define HML__ID_SIZE (HML__ID_DIGITS + 2)

/**
 * The prefix letter of the ids of `kind`: a collection of the manifest
 * ("datasets" 'd', "models" 'm', "deployments" 'p', "evaluations" 'e',
 * "searches" 's', "compiled" 'c') or "trials" ('t'); 0 for another kind.
 */
char hml__id_prefix(const char *kind);

/**
 * The number of id `s` of `kind`, read from its first `len` bytes, or -1
 * when those bytes are not such an id (wrong or unknown prefix, no digits,
 * a leading zero, too many digits, any other byte). Sets no error.
 */
long hml__id_number(const char *kind, const char *s, size_t len);

/**
 * 0 when `id` is an id of `kind`; else HML_EINVALID "'ID' is not a model
 * id (m1, m2, ...)" (the text quoted at most 40 bytes, NULL as "null").
 */
int hml__id_check(const char *kind, const char *id);

/**
 * Write the id of `kind` with number n into buf (size bytes; HML__ID_SIZE
 * suffice). Errors: HML_EINVALID for an unknown kind, a negative n or one
 * of more than HML__ID_DIGITS digits, or a buffer too small.
 */
int hml__id_format(char *buf, size_t size, const char *kind, long n);

#ifdef __cplusplus
}
#endif
#endif
