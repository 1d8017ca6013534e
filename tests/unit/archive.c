/*
 * tests/unit/archive.c - runtime/loader/archive.h: TorchScript archives
 * checked against their limits before libtorch reads them. The archives
 * are written here, entry by entry, so that every size, method and record
 * is exactly what the case needs.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "check.h"
#include "loader/archive.h"

typedef struct zent {
	const char *name;
	const unsigned char *data;
	size_t size;
	int deflate;
	uint32_t claim;      /* nonzero: the uncompressed size written instead */
} zent;

static unsigned char zbuf[1 << 22];
static size_t zlen;

static void put(const void *p, size_t n) { memcpy(zbuf + zlen, p, n); zlen += n; }
static void put16(unsigned v) { unsigned char b[2] = { v & 255, v >> 8 & 255 }; put(b, 2); }
static void put32(uint32_t v) { put16(v & 0xffff); put16(v >> 16); }

/* A zip archive of `n` entries into zbuf; the file's path. */
static const char *zip(const char *path, const zent *e, int n)
{
	static unsigned char comp[1 << 21];
	uint32_t off[64], csize[64];
	size_t cd, cd_size;
	FILE *f;

	zlen = 0;
	for (int i = 0; i < n; i++) {
		const unsigned char *d = e[i].data;
		uLongf cl = sizeof(comp);

		csize[i] = (uint32_t)e[i].size;
		if (e[i].deflate) {
			z_stream z;

			memset(&z, 0, sizeof(z));
			deflateInit2(&z, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
			z.next_in = (unsigned char *)e[i].data;
			z.avail_in = (uInt)e[i].size;
			z.next_out = comp;
			z.avail_out = (uInt)cl;
			deflate(&z, Z_FINISH);
			csize[i] = (uint32_t)z.total_out;
			deflateEnd(&z);
			d = comp;
		}
		off[i] = (uint32_t)zlen;
		put32(0x04034b50); put16(20); put16(0); put16(e[i].deflate ? 8 : 0);
		put16(0); put16(0); put32(0); put32(csize[i]);
		put32(e[i].claim ? e[i].claim : (uint32_t)e[i].size);
		put16((unsigned)strlen(e[i].name)); put16(0);
		put(e[i].name, strlen(e[i].name));
		put(d, csize[i]);
	}
	cd = zlen;
	for (int i = 0; i < n; i++) {
		put32(0x02014b50); put16(20); put16(20); put16(0); put16(e[i].deflate ? 8 : 0);
		put16(0); put16(0); put32(0); put32(csize[i]);
		put32(e[i].claim ? e[i].claim : (uint32_t)e[i].size);
		put16((unsigned)strlen(e[i].name)); put16(0); put16(0); put16(0); put16(0);
		put32(0); put32(off[i]);
		put(e[i].name, strlen(e[i].name));
	}
	cd_size = zlen - cd;
	put32(0x06054b50); put16(0); put16(0); put16((unsigned)n); put16((unsigned)n);
	put32((uint32_t)cd_size); put32((uint32_t)cd); put16(0);
	f = fopen(path, "wb");
	fwrite(zbuf, 1, zlen, f);
	fclose(f);
	return path;
}

static int check(const char *path, const hml__archive_limits *lim)
{
	int fd = open(path, O_RDONLY), rc;

	rc = hml__archive_check_with(fd, path, lim ? lim : &hml__archive_default_limits);
	close(fd);
	return rc;
}

#define CODE "class M(Module):\n  def forward(self, x: Tensor) -> Tensor:\n    return -x  # (\n"
#define PKL "\x80\x02}q\x00."

static zent code(const char *text)
{
	zent e = { "m/code/__torch__.py", (const unsigned char *)text, strlen(text), 1, 0 };
	return e;
}

static void model(const char *text)
{
	zent e[3] = { { "m/data.pkl", (const unsigned char *)PKL, 6, 0, 0 }, code(text),
	              { "m/data/0", (const unsigned char *)"0123456789abcdef", 16, 0, 0 } };

	zip("t.pt", e, 3);
}

TEST(a_model_passes)
{
	model(CODE);
	CHECK_OK(check("t.pt", NULL));
}

TEST(not_a_zip_empty_or_truncated)
{
	FILE *f = fopen("t.pt", "w");

	fputs("this is some text, not an archive at all\n", f);
	fclose(f);
	CHECK_FAILS(check("t.pt", NULL), HML_EMODEL, "not a TorchScript archive (no end of central");
	f = fopen("t.pt", "w");
	fclose(f);
	CHECK_FAILS(check("t.pt", NULL), HML_EMODEL, "too short to be a zip archive");
	model(CODE);
	CHECK_OK(truncate("t.pt", (off_t)(zlen - 30)));
	CHECK_FAILS(check("t.pt", NULL), HML_EMODEL, "not a TorchScript archive");
	zip("t.pt", NULL, 0);
	CHECK_FAILS(check("t.pt", NULL), HML_EMODEL, "the archive is empty");
}

TEST(damaged_records)
{
	model(CODE);
	/* The directory's offset moved past the end record. */
	zbuf[zlen - 6] = 0xff;
	FILE *f = fopen("t.pt", "wb");
	fwrite(zbuf, 1, zlen, f);
	fclose(f);
	CHECK_FAILS(check("t.pt", NULL), HML_EMODEL, "central directory lies outside the file");
	/* A local header that is not one. */
	model(CODE);
	zbuf[0] = 'X';
	f = fopen("t.pt", "wb");
	fwrite(zbuf, 1, zlen, f);
	fclose(f);
	CHECK_FAILS(check("t.pt", NULL), HML_EMODEL, "has no local header where the directory says");
}

TEST(methods_and_sizes)
{
	zent e = { "m/data/0", (const unsigned char *)"abcdefgh", 8, 0, 0 };
	hml__archive_limits l = hml__archive_default_limits;

	zip("t.pt", &e, 1);
	zbuf[zlen - 22 - 46 - 8 + 10] = 12;   /* bzip2 in the directory */
	{
		FILE *f = fopen("t.pt", "wb");
		fwrite(zbuf, 1, zlen, f);
		fclose(f);
	}
	CHECK_FAILS(check("t.pt", NULL), HML_EMODEL, "uses compression method 12");
	e.claim = 9;
	zip("t.pt", &e, 1);
	CHECK_FAILS(check("t.pt", NULL), HML_EMODEL, "stored entry 'm/data/0' has two sizes");
	e.claim = 0;
	zip("t.pt", &e, 1);
	l.entry = 7;
	CHECK_FAILS(check("t.pt", &l), HML_EMODEL, "entry 'm/data/0' is larger than 7 bytes");
	l = hml__archive_default_limits;
	l.total = 7;
	CHECK_FAILS(check("t.pt", &l), HML_EMODEL, "hold more than 7 bytes uncompressed");
	l = hml__archive_default_limits;
	l.entries = 0;
	CHECK_FAILS(check("t.pt", &l), HML_EMODEL, "it has more than 0 entries");
}

/* A deflated entry is inflated in bounded steps, and never past what it
 * claims: a small claim over a large stream is refused, not trusted. */
TEST(deflated_code_is_bounded)
{
	static char big[1 << 20];
	hml__archive_limits l = hml__archive_default_limits;
	zent e;

	memset(big, 'x', sizeof(big) - 1);
	for (size_t i = 80; i < sizeof(big) - 1; i += 80)
		big[i] = '\n';
	e = code(big);
	zip("t.pt", &e, 1);
	CHECK_OK(check("t.pt", NULL));
	l.code = 1000;
	CHECK_FAILS(check("t.pt", &l), HML_EMODEL, "code file 'm/code/__torch__.py' is larger than 1000 bytes");
	l = hml__archive_default_limits;
	l.deflated = 1000;
	CHECK_FAILS(check("t.pt", &l), HML_EMODEL, "compressed entry 'm/code/__torch__.py' is larger than 1000 bytes");
	e.claim = 500;   /* the directory says 500 bytes; the stream holds 1 MiB */
	zip("t.pt", &e, 1);
	CHECK_FAILS(check("t.pt", NULL), HML_EMODEL, "holds more than the 500 bytes its directory entry says");
}

TEST(code_shapes_that_recurse)
{
	static char text[1 << 16];
	hml__archive_limits l = hml__archive_default_limits;

	l.blank = 10;
	snprintf(text, sizeof(text), "%s%s", CODE, "\n\n\n\n\n  # c\n\n\n\n\n\n\n");
	model(text);
	CHECK_FAILS(check("t.pt", &l), HML_EMODEL, "more than 10 blank or comment-only lines in a row (from line 4)");
	l = hml__archive_default_limits;
	l.depth = 3;
	model("x = f((a[{1}]))\n");
	CHECK_FAILS(check("t.pt", &l), HML_EMODEL, "nests brackets deeper than 3 (line 1)");
	model("x = f(')))((((', (a))\n");   /* brackets in strings do not count */
	CHECK_OK(check("t.pt", &l));
	model("x = - - not ~ y\n");
	CHECK_FAILS(check("t.pt", &l), HML_EMODEL, "more than 3 prefix operators in a row (line 1)");
	model("x = a - b - c - d - e\n");
	CHECK_OK(check("t.pt", &l));
	l = hml__archive_default_limits;
	l.line = 20;
	model("x = 1\nyyyyyyyyyyyyyyyyyyyyyyyyyyyy = 2\n");
	CHECK_FAILS(check("t.pt", &l), HML_EMODEL, "has a line longer than 20 bytes (line 2)");
	l = hml__archive_default_limits;
	l.indent = 4;
	model("if x:\n      y = 1\n");
	CHECK_FAILS(check("t.pt", &l), HML_EMODEL, "is indented deeper than 4 columns (line 2)");
	/* 40000 blank lines crashed libtorch's parser with an 8 MiB stack. */
	memset(text, '\n', 40000);
	memcpy(text, CODE, strlen(CODE));
	text[40000] = 0;
	model(text);
	CHECK_FAILS(check("t.pt", NULL), HML_EMODEL, "more than 1000 blank or comment-only lines");
}

TEST(pickles_are_bounded)
{
	hml__archive_limits l = hml__archive_default_limits;

	model(CODE);
	l.pickle = 4;
	CHECK_FAILS(check("t.pt", &l), HML_EMODEL, "pickle 'm/data.pkl' is larger than 4 bytes");
}

int main(void)
{
	char dir[] = "/tmp/hml-test-archive-XXXXXX";

	if (!mkdtemp(dir) || chdir(dir) != 0)
		return 1;
	RUN(a_model_passes);
	RUN(not_a_zip_empty_or_truncated);
	RUN(damaged_records);
	RUN(methods_and_sizes);
	RUN(deflated_code_is_bounded);
	RUN(code_shapes_that_recurse);
	RUN(pickles_are_bounded);
	unlink("t.pt");
	if (chdir("/") == 0)
		rmdir(dir);
	return check_report();
}
