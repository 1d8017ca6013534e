/*
 * lib/core/collection_keep.c - compression names (collection_keep.h).
 */
#include <stdio.h>
#include <string.h>

#include "core/collection_keep.h"
#include "core/error.h"
#include "core/util.h"

#define DEFLATE_DEFAULT 4

/* "deflate" or "deflate:L" at `p`: the level, or -1. */
static int deflate_level(const char *p)
{
	int64_t level;

	if (strcmp(p, "deflate") == 0)
		return DEFLATE_DEFAULT;
	if (strncmp(p, "deflate:", 8) != 0 || hml__parse_i64(p + 8, &level) < 0 ||
	    level < 1 || level > 9)
		return -1;
	return (int)level;
}

int hml__compression_parse(hml__coll_compression *out, const char *text)
{
	hml__coll_compression z = { 0, 0, 0 };

	if (!text || strcmp(text, "none") == 0)
		;
	else if (strcmp(text, "szip") == 0)
		z.szip = 1;
	else if (strncmp(text, "shuffle+", 8) == 0 && deflate_level(text + 8) > 0)
		z.shuffle = 1, z.deflate = deflate_level(text + 8);
	else if (deflate_level(text) > 0)
		z.deflate = deflate_level(text);
	else
		return hml__error_set(HML_EINVALID, "unknown compression '%.64s' (expected %s)",
		                      text, HML__COLL_COMPRESSION_NAMES);
	*out = z;
	return 0;
}

void hml__coll_compression_name(char *buf, size_t size, const hml__coll_compression *z)
{
	if (z->szip)
		snprintf(buf, size, "szip");
	else if (z->deflate)
		snprintf(buf, size, "%sdeflate:%d", z->shuffle ? "shuffle+" : "", z->deflate);
	else
		snprintf(buf, size, "none");
}
