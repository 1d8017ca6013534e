/*
 * tests/unit/deployfile.c - the deployment file (lib/core/deployfile.h):
 * what `hml deploy` writes, the runtime's hot swap reads back (round
 * trip); a new deployment is a new file identity; bad files are refused
 * with their reason; a link in the way is never written through.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "core/deployfile.h"
#include "fixtures.h"

static hml__deployfile make(const char *label, const char *dep, const char *model,
                            const char *path)
{
	hml__deployfile d;

	memset(&d, 0, sizeof(d));
	snprintf(d.region, sizeof(d.region), "%s", label);
	snprintf(d.deployment, sizeof(d.deployment), "%s", dep);
	snprintf(d.model, sizeof(d.model), "%s", model);
	snprintf(d.path, sizeof(d.path), "%s", path);
	d.interleave = -1;
	return d;
}

TEST(round_trip_and_identity)
{
	hml__deployfile d = make("bin.omial-2", "p3", "m3", "/exp/models/m3.pt"), back;
	hml__file_identity a, b, none;
	char rel[128], path[700];

	CHECK_OK(hml__deployfile_rel(rel, sizeof(rel), d.region));
	CHECK_STR(rel, "deployed/bin.omial-2.json");
	snprintf(path, sizeof(path), "%s/%s", tmpdir, rel);
	hml__file_identity_get(path, &none);
	CHECK(!none.exists);
	CHECK_FAILS(hml__deployfile_read(path, &back), HML_ENOTFOUND, "cannot read deployment file");
	CHECK_OK(hml__deployfile_write(tmpdir, &d));
	CHECK_OK(hml__deployfile_read(path, &back));
	CHECK_STR(back.region, "bin.omial-2");
	CHECK_STR(back.deployment, "p3");
	CHECK_STR(back.model, "m3");
	CHECK_STR(back.path, "/exp/models/m3.pt");
	CHECK_STR(back.guard, "");   /* none written, none read */
	CHECK(back.k == 0 && back.interleave == -1);   /* no run recorded */
	snprintf(d.guard, sizeof(d.guard), "%s", "/exp/models/m3.guard-bounds-margin=0.01.json");
	CHECK_OK(hml__deployfile_write(tmpdir, &d));
	CHECK_OK(hml__deployfile_read(path, &back));
	CHECK_STR(back.guard, "/exp/models/m3.guard-bounds-margin=0.01.json");
	CHECK_STR(back.path, "/exp/models/m3.pt");
	hml__file_identity_get(path, &a);
	CHECK(a.exists && !hml__file_identity_same(&a, &none));
	d = make("bin.omial-2", "p4", "c5", "/exp/compiled/c5.so");
	CHECK_OK(hml__deployfile_write(tmpdir, &d));
	hml__file_identity_get(path, &b);
	CHECK(b.exists && !hml__file_identity_same(&a, &b));   /* renamed over: a new inode */
	CHECK_OK(hml__deployfile_read(path, &back));
	CHECK_STR(back.model, "c5");
	hml__file_identity_get(path, &a);
	CHECK(hml__file_identity_same(&a, &b));
}

/* An iterative deployment's k and the runtime's interleave: written and
 * read back (interleave 0, the model on every call, is a value); out of
 * range or not integers, the file is refused with the field named. */
TEST(run_fields)
{
	hml__deployfile d = make("heat_field", "p2", "m2", "/exp/models/m2.pt"), back;
	const struct { const char *field, *why; } bad[] = {
		{ "\"k\": 0", "its k is not an integer from 1" },
		{ "\"k\": 2.5", "its k is not an integer" },
		{ "\"interleave\": \"2\"", "its interleave is not an integer from 0" },
		{ "\"interleave\": -1", "its interleave is not an integer" },
	};
	char path[700], text[400];

	snprintf(path, sizeof(path), "%s/deployed/heat_field.json", tmpdir);
	d.k = 8;
	d.interleave = 0;
	CHECK_OK(hml__deployfile_write(tmpdir, &d));
	CHECK_OK(hml__deployfile_read(path, &back));
	CHECK(back.k == 8 && back.interleave == 0);
	d.interleave = 3;
	CHECK_OK(hml__deployfile_write(tmpdir, &d));
	CHECK_OK(hml__deployfile_read(path, &back));
	CHECK(back.k == 8 && back.interleave == 3);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "{\"schema_version\": 1, \"region\": \"r\", "
		         "\"deployment\": \"p1\", \"model\": \"m1\", \"path\": \"/m1.pt\", %s}",
		         bad[i].field);
		write_text(path, text);
		CHECK_FAILS(hml__deployfile_read(path, &back), HML_EIO, bad[i].why);
	}
}

TEST(bad_files)
{
	hml__deployfile back, d = make("r", "p1", "m1", "models/m1.pt");
	char path[700], target[700];

	CHECK_FAILS(hml__deployfile_write(tmpdir, &d), HML_EINVALID, "is not absolute");
	snprintf(path, sizeof(path), "%s/bad.json", tmpdir);
	write_text(path, "{not json");
	CHECK_FAILS(hml__deployfile_read(path, &back), HML_EIO, "cannot read deployment file");
	write_text(path, "{\"schema_version\": 1, \"region\": \"r\", \"model\": \"m1\"}");
	CHECK_FAILS(hml__deployfile_read(path, &back), HML_EIO, "missing or too long");
	write_text(path, "{\"schema_version\": 1, \"region\": \"r\", \"deployment\": \"p1\", "
	                 "\"model\": \"m1\", \"path\": \"m1.pt\"}");
	CHECK_FAILS(hml__deployfile_read(path, &back), HML_EIO, "absolute path");
	write_text(path, "{\"schema_version\": 1, \"region\": \"r\", \"deployment\": \"p1\", "
	                 "\"model\": \"m1\", \"path\": \"/m1.pt\", \"guard\": \"g.json\"}");
	CHECK_FAILS(hml__deployfile_read(path, &back), HML_EIO, "guard is not an absolute path");
	write_text(path, "{\"schema_version\": 1, \"region\": \"r\", \"deployment\": \"p1\", "
	                 "\"model\": \"m1\", \"path\": \"/m1.pt\", \"guard\": 3}");
	CHECK_FAILS(hml__deployfile_read(path, &back), HML_EIO, "guard is not an absolute path");
	d = make("r", "p1", "m1", "/m1.pt");
	snprintf(d.guard, sizeof(d.guard), "%s", "g.json");
	CHECK_FAILS(hml__deployfile_write(tmpdir, &d), HML_EINVALID, "guard path 'g.json'");
	d = make("r", "p1", "m1", "models/m1.pt");
	write_text(path, "{\"schema_version\": 9, \"region\": \"r\"}");
	CHECK_FAILS(hml__deployfile_read(path, &back), HML_ENOTSUPPORTED, "schema_version 9");
	write_text(path, "[1, 2]");
	CHECK_FAILS(hml__deployfile_read(path, &back), HML_EIO, "not an hml deployment file");
	snprintf(path, sizeof(path), "%s", tmpdir);
	CHECK(hml__deployfile_read(path, &back) == HML_EIO);
	/* A link where the file goes is refused, its target untouched. */
	snprintf(target, sizeof(target), "%s/target.txt", tmpdir);
	write_text(target, "kept");
	snprintf(path, sizeof(path), "%s/deployed/l.json", tmpdir);
	CHECK(symlink(target, path) == 0);
	d = make("l", "p1", "m1", "/m1.pt");
	CHECK_FAILS(hml__deployfile_write(tmpdir, &d), HML_EINVALID, "symbolic link");
	{
		char *t = read_text(target);
		CHECK_STR(t, "kept");
		free(t);
	}
}

int main(void)
{
	if (tmp_dir_make("deployfile") < 0)
		return 1;
	RUN(round_trip_and_identity);
	RUN(run_fields);
	RUN(bad_files);
	tmp_dir_remove();
	return check_report();
}
