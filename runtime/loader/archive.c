/*
 * runtime/loader/archive.c - a TorchScript archive checked against the
 * documented limits before libtorch sees it (archive.h).
 *
 * The zip structure is read here rather than through libzip: what is
 * needed is small (the end records, the central directory, each local
 * header), every size must be checked before anything is allocated from
 * it, and libhml would otherwise gain a dependency for forty lines of
 * reading. Inflating is zlib's, streamed through a fixed buffer.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "core/error.h"
#include "loader/archive.h"

const hml__archive_limits hml__archive_default_limits = {
	HML__ARCHIVE_MAX_ENTRIES, HML__ARCHIVE_MAX_ENTRY, HML__ARCHIVE_MAX_TOTAL,
	HML__ARCHIVE_MAX_DEFLATED, HML__ARCHIVE_MAX_CODE, HML__ARCHIVE_MAX_PICKLE,
	HML__ARCHIVE_MAX_LINE, HML__ARCHIVE_MAX_BLANK, HML__ARCHIVE_MAX_DEPTH,
	HML__ARCHIVE_MAX_INDENT
};

#define CHUNK 65536
#define MAX_CD ((uint64_t)64 << 20)
#define MAX_NAME 4096
#define EOCD_SIZE 22
#define U16MAX 0xffffu
#define U32MAX 0xffffffffu

typedef struct archive {
	int fd;
	const char *path;
	const hml__archive_limits *lim;
	uint64_t size;
	unsigned char *in, *out;   /* CHUNK each */
} archive;

/* One entry of the central directory, as far as it matters here. */
typedef struct entry {
	char name[MAX_NAME + 1];
	unsigned method, flags;
	uint64_t csize, usize, local;
} entry;

static uint16_t le16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t le32(const unsigned char *p) { return (uint32_t)le16(p) | (uint32_t)le16(p + 2) << 16; }
static uint64_t le64(const unsigned char *p) { return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32; }

/* Not a well-formed archive. */
static int bad(const archive *a, const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return hml__error_set(HML_EMODEL, "cannot open model '%s': not a TorchScript archive (%s)",
	                      a->path, why);
}

/* Past one of the limits. */
static int over(const archive *a, const char *fmt, ...)
{
	char why[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return hml__error_set(HML_EMODEL, "cannot open model '%s': %s", a->path, why);
}

static int read_at(const archive *a, uint64_t off, void *buf, size_t n, const char *what)
{
	size_t got = 0;

	if (off > a->size || n > a->size - off)
		return bad(a, "%s lies past the end of the file", what);
	while (got < n) {
		ssize_t r = pread(a->fd, (char *)buf + got, n - got, (off_t)(off + got));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return hml__error_set(HML_EIO, "cannot read model '%s': %s", a->path,
			                      strerror(errno));
		if (r == 0)
			return bad(a, "%s is truncated", what);
		got += (size_t)r;
	}
	return 0;
}

/* ---- code files: what makes libtorch's parser recurse ------------------- */

typedef struct scan {
	const archive *a;
	const char *name;
	uint64_t lineno, len, blank, blank_from, indent, depth, ops;
	int at_start, content, comment, esc, wlen;
	char quote, word[4];
} scan;

static int scan_word_end(scan *s)
{
	if (s->wlen == 3 && memcmp(s->word, "not", 3) == 0) {
		if (++s->ops > s->a->lim->depth)
			goto too_many;
	} else if (s->wlen) {
		s->ops = 0;
	}
	s->wlen = 0;
	return 0;
too_many:
	return over(s->a, "code file '%s' has more than %llu prefix operators in a row (line %llu)",
	            s->name, (unsigned long long)s->a->lim->depth, (unsigned long long)s->lineno);
}

static int scan_newline(scan *s)
{
	int rc = scan_word_end(s);

	if (rc < 0)
		return rc;
	if (s->content) {
		s->blank = 0;
	} else if (s->blank++ == 0) {
		s->blank_from = s->lineno;
	}
	if (s->blank > s->a->lim->blank)
		return over(s->a, "code file '%s' has more than %llu blank or comment-only lines in a "
		            "row (from line %llu)", s->name, (unsigned long long)s->a->lim->blank,
		            (unsigned long long)s->blank_from);
	s->lineno++;
	s->len = s->indent = 0;
	s->at_start = 1;
	s->content = s->comment = s->esc = 0;
	s->quote = 0;   /* strings end with their line (TorchScript prints no others) */
	return 0;
}

/* A character of code outside strings and comments, after indentation. */
static int scan_code(scan *s, unsigned char c)
{
	int rc;

	if (c == ' ' || c == '\t' || c == '\r' || c == '\f')
		return scan_word_end(s);
	if (c == '#') {
		s->comment = 1;
		return scan_word_end(s);
	}
	s->content = 1;
	if (c == '_' || (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') ||
	    c >= 0x80) {
		if (s->wlen < 4)
			s->word[s->wlen] = (char)c;
		if (s->wlen < 4)
			s->wlen++;
		return 0;
	}
	if ((rc = scan_word_end(s)) < 0)
		return rc;
	if (c == '-' || c == '+' || c == '~') {
		if (++s->ops > s->a->lim->depth)
			return over(s->a, "code file '%s' has more than %llu prefix operators in a row "
			            "(line %llu)", s->name, (unsigned long long)s->a->lim->depth,
			            (unsigned long long)s->lineno);
		return 0;
	}
	s->ops = 0;
	if (c == '\'' || c == '"')
		s->quote = (char)c;
	else if ((c == '(' || c == '[' || c == '{') && ++s->depth > s->a->lim->depth)
		return over(s->a, "code file '%s' nests brackets deeper than %llu (line %llu)", s->name,
		            (unsigned long long)s->a->lim->depth, (unsigned long long)s->lineno);
	else if ((c == ')' || c == ']' || c == '}') && s->depth > 0)
		s->depth--;
	return 0;
}

static int scan_char(scan *s, unsigned char c)
{
	if (c == '\n')
		return scan_newline(s);
	if (++s->len > s->a->lim->line)
		return over(s->a, "code file '%s' has a line longer than %llu bytes (line %llu)", s->name,
		            (unsigned long long)s->a->lim->line, (unsigned long long)s->lineno);
	if (s->comment)
		return 0;
	if (s->at_start) {
		if (c == ' ' || c == '\t' || c == '\f' || c == '\r') {
			s->indent += c == '\t' ? 8 : 1;
			return 0;
		}
		s->at_start = 0;
		if (c != '#' && s->indent > s->a->lim->indent)
			return over(s->a, "code file '%s' is indented deeper than %llu columns (line %llu)",
			            s->name, (unsigned long long)s->a->lim->indent,
			            (unsigned long long)s->lineno);
	}
	if (s->quote) {
		s->content = 1;
		if (s->esc)
			s->esc = 0;
		else if (c == '\\')
			s->esc = 1;
		else if (c == (unsigned char)s->quote)
			s->quote = 0;
		return 0;
	}
	return scan_code(s, c);
}

/* ---- one entry's data, streamed ----------------------------------------- */

/* Bytes of an entry's data as they come: counted against `limit`, and
 * scanned when `sc` is given. */
static int consume(const archive *a, const entry *e, scan *sc, uint64_t *produced,
                   const unsigned char *p, size_t n, uint64_t limit, const char *kind)
{
	int rc;

	if (n > e->usize - *produced)
		return bad(a, "entry '%s' holds more than the %llu bytes its directory entry says",
		           e->name, (unsigned long long)e->usize);
	*produced += n;
	if (*produced > limit)
		return over(a, "%s '%s' is larger than %llu bytes", kind, e->name,
		            (unsigned long long)limit);
	for (size_t i = 0; sc && i < n; i++)
		if ((rc = scan_char(sc, p[i])) < 0)
			return rc;
	return 0;
}

static int inflate_entry(const archive *a, const entry *e, uint64_t data, scan *sc,
                         uint64_t limit, const char *kind, uint64_t *produced)
{
	z_stream z;
	uint64_t left = e->csize;
	int rc = 0, zr = Z_OK;

	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, -MAX_WBITS) != Z_OK)
		return hml__error_oom();
	while (rc == 0 && zr != Z_STREAM_END) {
		if (z.avail_in == 0) {
			size_t n = left < CHUNK ? (size_t)left : CHUNK;

			if (n == 0) {
				rc = bad(a, "entry '%s' ends before its compressed data does", e->name);
				break;
			}
			if ((rc = read_at(a, data + (e->csize - left), a->in, n, "an entry's data")) < 0)
				break;
			left -= n;
			z.next_in = a->in;
			z.avail_in = (uInt)n;
		}
		z.next_out = a->out;
		z.avail_out = CHUNK;
		zr = inflate(&z, Z_NO_FLUSH);
		if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) {
			rc = bad(a, "entry '%s' is not valid deflate data", e->name);
			break;
		}
		rc = consume(a, e, sc, produced, a->out, CHUNK - z.avail_out, limit, kind);
	}
	inflateEnd(&z);
	return rc;
}

static int read_entry(const archive *a, const entry *e, uint64_t data, scan *sc,
                      uint64_t limit, const char *kind)
{
	uint64_t produced = 0;
	int rc;

	if (e->method == 8) {
		rc = inflate_entry(a, e, data, sc, limit, kind, &produced);
	} else {
		for (rc = 0; rc == 0 && produced < e->usize;) {
			size_t n = e->usize - produced < CHUNK ? (size_t)(e->usize - produced) : CHUNK;

			if ((rc = read_at(a, data + produced, a->in, n, "an entry's data")) == 0)
				rc = consume(a, e, sc, &produced, a->in, n, limit, kind);
		}
	}
	if (rc == 0 && sc)
		rc = scan_newline(sc);   /* the last line, ended or not */
	if (rc == 0 && produced != e->usize)
		rc = bad(a, "entry '%s' holds %llu bytes, its directory entry says %llu", e->name,
		         (unsigned long long)produced, (unsigned long long)e->usize);
	return rc;
}

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && strcmp(s + n - t, tail) == 0;
}

static int is_code(const char *name)
{
	return ends_with(name, ".py") && (strncmp(name, "code/", 5) == 0 || strstr(name, "/code/"));
}

/* Where the entry's data begins (its local header read), and its content
 * checked when it is code or a pickle. */
static int check_data(const archive *a, const entry *e, uint64_t cd_off)
{
	unsigned char h[30];
	uint64_t data;
	int rc;

	if (e->local > cd_off || cd_off - e->local < 30)
		return bad(a, "entry '%s' has its header outside the archive's data", e->name);
	if ((rc = read_at(a, e->local, h, sizeof(h), "a local header")) < 0)
		return rc;
	if (le32(h) != 0x04034b50)
		return bad(a, "entry '%s' has no local header where the directory says", e->name);
	data = e->local + 30 + le16(h + 26) + le16(h + 28);
	if (data > cd_off || e->csize > cd_off - data)
		return bad(a, "entry '%s' has its data outside the archive's data", e->name);
	if (is_code(e->name)) {
		scan sc;

		memset(&sc, 0, sizeof(sc));
		sc.a = a;
		sc.name = e->name;
		sc.lineno = 1;
		sc.at_start = 1;
		if (e->usize > a->lim->code)
			return over(a, "code file '%s' is larger than %llu bytes", e->name,
			            (unsigned long long)a->lim->code);
		return read_entry(a, e, data, &sc, a->lim->code, "code file");
	}
	if (ends_with(e->name, ".pkl") || ends_with(e->name, ".debug_pkl")) {
		if (e->usize > a->lim->pickle)
			return over(a, "pickle '%s' is larger than %llu bytes", e->name,
			            (unsigned long long)a->lim->pickle);
		return read_entry(a, e, data, NULL, a->lim->pickle, "pickle");
	}
	return 0;
}

/* ---- the central directory ---------------------------------------------- */

/* The zip64 extended information of a directory entry: the 64-bit values
 * of the fields saturated in its fixed part, in their fixed order. */
static int zip64_sizes(const archive *a, entry *e, const unsigned char *x, size_t xlen)
{
	uint64_t *want[3] = { &e->usize, &e->csize, &e->local };
	size_t p = 0;

	while (p + 4 <= xlen) {
		unsigned id = le16(x + p), len = le16(x + p + 2);
		size_t q = p + 4;

		if (len > xlen - q)
			break;
		if (id == 1) {
			for (int i = 0; i < 3; i++) {
				if (*want[i] != U32MAX)
					continue;
				if (q + 8 > p + 4 + len)
					return bad(a, "entry '%s' has a short zip64 field", e->name);
				*want[i] = le64(x + q);
				q += 8;
			}
			return 0;
		}
		p = q + len;
	}
	if (e->usize == U32MAX || e->csize == U32MAX || e->local == U32MAX)
		return bad(a, "entry '%s' needs a zip64 field and has none", e->name);
	return 0;
}

/* The directory entry at cd[*p] into *e; *p moves past it. */
static int parse_entry(const archive *a, const unsigned char *cd, uint64_t cd_size,
                       uint64_t *p, entry *e)
{
	const unsigned char *h = cd + *p;
	unsigned nlen, xlen, clen;

	if (cd_size - *p < 46 || le32(h) != 0x02014b50)
		return bad(a, "the central directory is cut short or damaged");
	nlen = le16(h + 28), xlen = le16(h + 30), clen = le16(h + 32);
	if (cd_size - *p - 46 < (uint64_t)nlen + xlen + clen)
		return bad(a, "the central directory is cut short");
	if (nlen == 0 || nlen > MAX_NAME || memchr(h + 46, 0, nlen))
		return bad(a, "an entry has an empty, overlong or malformed name");
	memcpy(e->name, h + 46, nlen);
	e->name[nlen] = 0;
	e->flags = le16(h + 8);
	e->method = le16(h + 10);
	e->csize = le32(h + 20);
	e->usize = le32(h + 24);
	e->local = le32(h + 42);
	*p += 46 + (uint64_t)nlen + xlen + clen;
	if (le16(h + 34) != 0 && le16(h + 34) != U16MAX)
		return bad(a, "entry '%s' is on another disk", e->name);
	return zip64_sizes(a, e, h + 46 + nlen, xlen);
}

static int check_entry(const archive *a, const entry *e, uint64_t *total)
{
	const hml__archive_limits *l = a->lim;

	if (e->flags & 1)
		return bad(a, "entry '%s' is encrypted", e->name);
	if (e->method != 0 && e->method != 8)
		return bad(a, "entry '%s' uses compression method %u (only stored and deflate are "
		           "read)", e->name, e->method);
	if (e->method == 0 && e->csize != e->usize)
		return bad(a, "stored entry '%s' has two sizes", e->name);
	if (e->usize > l->entry)
		return over(a, "entry '%s' is larger than %llu bytes", e->name,
		            (unsigned long long)l->entry);
	if (e->method == 8 && e->usize > l->deflated)
		return over(a, "compressed entry '%s' is larger than %llu bytes uncompressed", e->name,
		            (unsigned long long)l->deflated);
	if ((*total += e->usize) > l->total)
		return over(a, "its entries hold more than %llu bytes uncompressed",
		            (unsigned long long)l->total);
	return 0;
}

typedef struct directory {
	uint64_t entries, size, offset, end;   /* end: where the records after it begin */
} directory;

/* The zip64 end of central directory record, found through its locator
 * just before the classic record at `eocd`. */
static int read_zip64(const archive *a, uint64_t eocd, directory *d)
{
	unsigned char loc[20], r[56];
	uint64_t at;
	int rc;

	if (eocd < 20 || (rc = read_at(a, eocd - 20, loc, sizeof(loc), "the zip64 locator")) < 0)
		return eocd < 20 ? bad(a, "no zip64 locator") : rc;
	if (le32(loc) != 0x07064b50)
		return bad(a, "no zip64 locator before the end of central directory");
	at = le64(loc + 8);
	if (le32(loc + 4) != 0 || le32(loc + 16) > 1)
		return bad(a, "the archive spans several disks");
	if (at > eocd - 20 || eocd - 20 - at < sizeof(r))
		return bad(a, "the zip64 end of central directory is misplaced");
	if ((rc = read_at(a, at, r, sizeof(r), "the zip64 end of central directory")) < 0)
		return rc;
	if (le32(r) != 0x06064b50 || le32(r + 16) != 0 || le32(r + 20) != 0 ||
	    le64(r + 24) != le64(r + 32))
		return bad(a, "the zip64 end of central directory is damaged");
	d->entries = le64(r + 32);
	d->size = le64(r + 40);
	d->offset = le64(r + 48);
	d->end = at;
	return 0;
}

/* The end of central directory record: the last one, ending the file. */
static int read_end(const archive *a, directory *d)
{
	size_t tail = a->size < EOCD_SIZE + U16MAX ? (size_t)a->size : EOCD_SIZE + U16MAX;
	unsigned char *t;
	uint64_t eocd;
	size_t p;
	int rc;

	if (a->size < EOCD_SIZE)
		return bad(a, "too short to be a zip archive");
	if (!(t = malloc(tail)))
		return hml__error_oom();
	if ((rc = read_at(a, a->size - tail, t, tail, "the end of the archive")) < 0)
		goto done;
	for (p = tail - EOCD_SIZE + 1; p-- > 0;)
		if (le32(t + p) == 0x06054b50 && p + EOCD_SIZE + le16(t + p + 20) == tail)
			break;
	if (p == (size_t)-1) {
		rc = bad(a, "no end of central directory record: not a zip file, or truncated");
		goto done;
	}
	eocd = a->size - tail + p;
	if (le16(t + p + 4) != 0 || le16(t + p + 6) != 0 || le16(t + p + 8) != le16(t + p + 10)) {
		rc = bad(a, "the archive spans several disks");
		goto done;
	}
	d->entries = le16(t + p + 10);
	d->size = le32(t + p + 12);
	d->offset = le32(t + p + 16);
	d->end = eocd;
	if (d->entries == U16MAX || d->size == U32MAX || d->offset == U32MAX)
		rc = read_zip64(a, eocd, d);
done:
	free(t);
	return rc;
}

static int check_directory(const archive *a, const directory *d)
{
	unsigned char *cd;
	uint64_t p = 0, total = 0;
	entry *e;
	int rc = 0;

	if (d->entries > a->lim->entries)
		return over(a, "it has more than %llu entries", (unsigned long long)a->lim->entries);
	if (d->entries == 0)
		return bad(a, "the archive is empty");
	if (d->offset > d->end || d->size > d->end - d->offset)
		return bad(a, "the central directory lies outside the file");
	if (d->size > MAX_CD || d->size < d->entries * 46)
		return bad(a, "the central directory's size (%llu bytes) does not fit %llu entries",
		           (unsigned long long)d->size, (unsigned long long)d->entries);
	cd = malloc(d->size);
	e = malloc(sizeof(*e));
	if (!cd || !e)
		rc = hml__error_oom();
	else
		rc = read_at(a, d->offset, cd, d->size, "the central directory");
	for (uint64_t i = 0; rc == 0 && i < d->entries; i++)
		if ((rc = parse_entry(a, cd, d->size, &p, e)) == 0 &&
		    (rc = check_entry(a, e, &total)) == 0)
			rc = check_data(a, e, d->offset);
	free(cd);
	free(e);
	return rc;
}

int hml__archive_check_with(int fd, const char *path, const hml__archive_limits *lim)
{
	archive a = { fd, path ? path : "?", lim, 0, NULL, NULL };
	directory d = { 0, 0, 0, 0 };
	struct stat st;
	int rc;

	if (fstat(fd, &st) != 0)
		return hml__error_set(HML_EIO, "cannot read model '%s': %s", a.path, strerror(errno));
	a.size = (uint64_t)st.st_size;
	a.in = malloc(CHUNK);
	a.out = malloc(CHUNK);
	if (!a.in || !a.out)
		rc = hml__error_oom();
	else if ((rc = read_end(&a, &d)) == 0)
		rc = check_directory(&a, &d);
	free(a.in);
	free(a.out);
	return rc;
}

int hml__archive_check(int fd, const char *path)
{
	return hml__archive_check_with(fd, path, &hml__archive_default_limits);
}
