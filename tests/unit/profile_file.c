/*
 * tests/unit/profile_file.c - the profile JSON: what the runtime writes at
 * exit, hml evaluate reads back (round trip); non-finite numbers; bad
 * files.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "fixtures.h"
#include "core/profile_file.h"


static const char *path_of(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", tmpdir, name);
	return buf;
}

TEST(round_trip)
{
	hml__profile_record recs[2], back;
	char path[640];

	memset(recs, 0, sizeof(recs));
	snprintf(recs[0].label, sizeof(recs[0].label), "binomial");
	snprintf(recs[0].mode, sizeof(recs[0].mode), "infer");
	recs[0].stats = (hml_region_stats){ 4, 1, 3, 0, 1, 16384, 0, 0.125, 0.01, 0.02,
	                                    0.03, 0.04, 0.0, NAN, INFINITY, 2,
	                                    16384, 700, 3, 1, 0.002, 5, 0.015 };
	snprintf(recs[1].label, sizeof(recs[1].label), "bin.omial-2");
	snprintf(recs[1].mode, sizeof(recs[1].mode), "shadow");
	recs[1].stats = (hml_region_stats){ 9000000000ULL, 2, 3, 4, 5, 6, 7, 1e-9, 2, 3, 4,
	                                    5, 6, 0.25, 0.5, 0, 0, 0, 0, 0, 0.0, 0, 0 };
	recs[1].threads = 3;   /* recs[0]: not recorded, read back as 0 */
	snprintf(recs[0].guard, sizeof(recs[0].guard), "bounds:margin=0.05");
	path_of(path, sizeof(path), "p.json");
	CHECK_OK(hml__profile_file_write(path, recs, 2, NULL));
	for (int i = 0; i < 2; i++) {
		const hml_region_stats *a = &recs[i].stats, *b = &back.stats;

		CHECK_OK(hml__profile_file_find(path, recs[i].label, &back));
		CHECK_STR(back.label, recs[i].label);
		CHECK_STR(back.mode, recs[i].mode);
		CHECK_EQ_INT(back.threads, recs[i].threads);
		CHECK_STR(back.guard, recs[i].guard);
		CHECK(a->checked_rows == b->checked_rows && a->guarded_rows == b->guarded_rows &&
		      a->guarded_calls == b->guarded_calls &&
		      a->guard_whole_calls == b->guard_whole_calls && a->guard_s == b->guard_s &&
		      a->agreed_calls == b->agreed_calls);
		CHECK(a->calls == b->calls && a->original_calls == b->original_calls &&
		      a->model_calls == b->model_calls && a->shadow_calls == b->shadow_calls &&
		      a->fallback_calls == b->fallback_calls && a->rows_in == b->rows_in &&
		      a->rows_out == b->rows_out && a->nonfinite_calls == b->nonfinite_calls);
		CHECK(a->region_s == b->region_s && a->gather_s == b->gather_s &&
		      a->forward_s == b->forward_s && a->scatter_s == b->scatter_s &&
		      a->original_s == b->original_s && a->write_s == b->write_s &&
		      a->collect_outside_s == b->collect_outside_s);
		if (i == 0)
			CHECK(isnan(b->shadow_rmse) && isnan(b->shadow_max_abs));
		else
			CHECK(b->shadow_rmse == 0.25 && b->shadow_max_abs == 0.5);
	}
	/* Written through a temporary file, which is gone. */
	{
		char tmp[700];

		snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
		CHECK(access(tmp, F_OK) != 0);
	}
}

TEST(records_of_one_label_summed)
{
	hml__profile_record recs[3], back;
	char path[640];

	memset(recs, 0, sizeof(recs));
	for (int i = 0; i < 3; i++)
		snprintf(recs[i].mode, sizeof(recs[i].mode), i == 2 ? "off" : "shadow");
	snprintf(recs[0].label, sizeof(recs[0].label), "r");
	snprintf(recs[1].label, sizeof(recs[1].label), "other");
	snprintf(recs[2].label, sizeof(recs[2].label), "r");
	recs[0].stats = (hml_region_stats){ 4, 4, 0, 2, 0, 400, 400, 1.0, 0.5, 0, 0, 0.25, 0, 3.0, 5.0, 0, 0, 0, 0, 0, 0.0, 2, 0 };
	recs[1].stats = (hml_region_stats){ 100, 0, 0, 0, 0, 0, 0, 9, 9, 9, 9, 9, 9, NAN, NAN, 0, 0, 0, 0, 0, 0.0, 7, 0 };
	recs[2].stats = (hml_region_stats){ 1, 1, 0, 1, 0, 32, 32, 0.5, 0.25, 0, 0, 0.125, 0, 6.0, 4.0, 1, 0, 0, 0, 0, 0.0, 3, 0 };
	recs[0].threads = 2;
	recs[2].threads = 5;
	path_of(path, sizeof(path), "sum.json");
	CHECK_OK(hml__profile_file_write(path, recs, 3, NULL));
	CHECK_OK(hml__profile_file_find(path, "r", &back));
	CHECK_STR(back.mode, "shadow");
	CHECK_EQ_INT(back.threads, 2);
	CHECK(back.stats.calls == 5 && back.stats.original_calls == 5 && back.stats.shadow_calls == 3);
	CHECK(back.stats.rows_in == 432 && back.stats.nonfinite_calls == 1);
	CHECK_EQ_INT(back.stats.agreed_calls, 5);
	CHECK(back.stats.region_s == 1.5 && back.stats.gather_s == 0.75 && back.stats.original_s == 0.375);
	CHECK(fabs(back.stats.shadow_rmse - sqrt((9.0 * 2 + 36.0) / 3)) < 1e-12);
	CHECK(back.stats.shadow_max_abs == 5.0);
}

/* Hot swaps (the runtime's swap.c) round-trip, and records of one label
 * append theirs; a profile without them reads as none. */
TEST(swaps_round_trip)
{
	hml__profile_record recs[2], back;
	char path[640];

	memset(recs, 0, sizeof(recs));
	for (int i = 0; i < 2; i++) {
		snprintf(recs[i].label, sizeof(recs[i].label), "r");
		snprintf(recs[i].mode, sizeof(recs[i].mode), "infer");
	}
	recs[0].swaps.n = recs[0].swaps.done = 2;
	recs[0].swaps.refused = 3;
	snprintf(recs[0].swaps.at[0].from, 64, "m1");
	snprintf(recs[0].swaps.at[0].to, 64, "m2");
	recs[0].swaps.at[0].call = 120;
	snprintf(recs[0].swaps.at[1].from, 64, "m2");
	snprintf(recs[0].swaps.at[1].to, 64, "c4");
	recs[0].swaps.at[1].call = 9000000000ULL;
	recs[1].swaps.n = 1;
	recs[1].swaps.done = 40;   /* more than listed: "swaps_done" */
	snprintf(recs[1].swaps.at[0].from, 64, "c4");
	snprintf(recs[1].swaps.at[0].to, 64, "m7");
	recs[1].swaps.at[0].call = 5;
	path_of(path, sizeof(path), "swaps.json");
	CHECK_OK(hml__profile_file_write(path, recs, 1, NULL));
	CHECK_OK(hml__profile_file_find(path, "r", &back));
	CHECK(back.swaps.n == 2 && back.swaps.done == 2 && back.swaps.refused == 3);
	CHECK_STR(back.swaps.at[0].from, "m1");
	CHECK_STR(back.swaps.at[0].to, "m2");
	CHECK(back.swaps.at[0].call == 120);
	CHECK_STR(back.swaps.at[1].to, "c4");
	CHECK(back.swaps.at[1].call == 9000000000ULL);
	CHECK_OK(hml__profile_file_write(path, recs, 2, NULL));
	CHECK_OK(hml__profile_file_find(path, "r", &back));
	CHECK(back.swaps.n == 3 && back.swaps.done == 42 && back.swaps.refused == 3);
	CHECK_STR(back.swaps.at[2].to, "m7");
	CHECK(back.swaps.at[2].call == 5);
	write_text(path, "{\"schema_version\": 1, \"regions\": [{\"label\": \"r\", \"calls\": 2}]}");
	CHECK_OK(hml__profile_file_find(path, "r", &back));
	CHECK(back.swaps.n == 0 && back.swaps.done == 0 && back.swaps.refused == 0);
	/* a profile of an older hml: no time of the collector outside the calls */
	CHECK(back.stats.collect_outside_s == 0 && back.stats.guard_s == 0);
}

/* The process's CPU and CPU-wait seconds: written, read back in every
 * region's record, NaN when absent or negative, the share computed. */
TEST(cpu_round_trip)
{
	hml__profile_record recs[2], back;
	hml__profile_cpu cpu = { 1.5, 0.5, 1 }, none = { NAN, 0.25, 1 };
	char path[640];

	memset(recs, 0, sizeof(recs));
	snprintf(recs[0].label, sizeof(recs[0].label), "a");
	snprintf(recs[1].label, sizeof(recs[1].label), "b");
	path_of(path, sizeof(path), "cpu.json");
	CHECK_OK(hml__profile_file_write(path, recs, 2, &cpu));
	CHECK_OK(hml__profile_file_find(path, "b", &back));
	CHECK(back.cpu.run_s == 1.5 && back.cpu.wait_s == 0.5);
	CHECK(hml__profile_cpu_wait_share(&back.cpu) == 0.25);
	CHECK_OK(hml__profile_file_write(path, recs, 2, &none));   /* unknown: not written */
	CHECK_OK(hml__profile_file_find(path, "a", &back));
	CHECK(isnan(back.cpu.run_s) && isnan(back.cpu.wait_s));
	CHECK(isnan(hml__profile_cpu_wait_share(&back.cpu)));
	write_text(path, "{\"schema_version\": 1, \"regions\": [{\"label\": \"a\"}], "
	           "\"cpu\": {\"run_s\": -1, \"wait_s\": \"x\"}}");
	CHECK_OK(hml__profile_file_find(path, "a", &back));
	CHECK(isnan(back.cpu.run_s) && isnan(back.cpu.wait_s));
	cpu = (hml__profile_cpu){ 0, 0, 1 };
	CHECK(isnan(hml__profile_cpu_wait_share(&cpu)) && !hml__profile_cpu_waited(&cpu));
	/* Said only from a share of 0.2 and 0.1 s of waiting on. */
	cpu = (hml__profile_cpu){ 0.3, 0.1, 1 };
	CHECK(hml__profile_cpu_waited(&cpu));
	cpu = (hml__profile_cpu){ 0.03, 0.01, 1 };   /* a large share of little */
	CHECK(!hml__profile_cpu_waited(&cpu));
	cpu = (hml__profile_cpu){ 10.0, 1.0, 1 };    /* much, but a small share */
	CHECK(!hml__profile_cpu_waited(&cpu));
	/* a sum over 3 processes: the floor is per process */
	cpu = (hml__profile_cpu){ 0.6, 0.2, 3 };
	CHECK(!hml__profile_cpu_waited(&cpu));
	cpu = (hml__profile_cpu){ 0.6, 0.4, 3 };
	CHECK(hml__profile_cpu_waited(&cpu));
	cpu = (hml__profile_cpu){ NAN, 5.0, 1 };
	CHECK(!hml__profile_cpu_waited(&cpu));
	CHECK(isnan(hml__profile_cpu_wait_share(NULL)));
}

TEST(region_not_entered)
{
	hml__profile_record rec, back;
	char path[640];

	memset(&rec, 0, sizeof(rec));
	snprintf(rec.label, sizeof(rec.label), "a");
	snprintf(rec.mode, sizeof(rec.mode), "off");
	path_of(path, sizeof(path), "a.json");
	CHECK_OK(hml__profile_file_write(path, &rec, 1, NULL));
	CHECK_FAILS(hml__profile_file_find(path, "b", &back), HML_ENOTFOUND,
	            "the application never entered region 'b'");
	CHECK_OK(hml__profile_file_write(path, NULL, 0, NULL));
	CHECK_FAILS(hml__profile_file_find(path, "a", &back), HML_ENOTFOUND, "region 'a'");
}

TEST(bad_files)
{
	hml__profile_record back;
	char path[640];

	path_of(path, sizeof(path), "none.json");
	CHECK_FAILS(hml__profile_file_find(path, "a", &back), HML_EIO, "cannot read profile");
	path_of(path, sizeof(path), "bad.json");
	write_text(path, "{\"regions\": [");
	CHECK_FAILS(hml__profile_file_find(path, "a", &back), HML_EIO, "cannot read profile");
	write_text(path, "[1, 2]");
	CHECK_FAILS(hml__profile_file_find(path, "a", &back), HML_EIO, "not an hml profile");
	write_text(path, "{\"schema_version\": 2, \"regions\": []}");
	CHECK_FAILS(hml__profile_file_find(path, "a", &back), HML_ENOTSUPPORTED,
	            "schema_version 2");
	/* Bounded: a FIFO is refused without blocking, a file over the bound
	 * (sparse: nothing is written) unread. */
	path_of(path, sizeof(path), "fifo.json");
	CHECK(mkfifo(path, 0600) == 0);
	CHECK_FAILS(hml__profile_file_find(path, "a", &back), HML_EIO,
	            "': not a regular file");
	path_of(path, sizeof(path), "huge.json");
	write_text(path, "{");
	CHECK(truncate(path, (off_t)HML__PROFILE_MAX_BYTES + 1) == 0);
	CHECK_FAILS(hml__profile_file_find(path, "a", &back), HML_EIO, "is larger than");
	CHECK_CONTAINS(hml_error_last()->message, "cannot read profile '");
	path_of(path, sizeof(path), "no-such-dir/p.json");
	CHECK_FAILS(hml__profile_file_write(path, NULL, 0, NULL), HML_EIO, "cannot write profile");
}

/* The writer renames over its path: never over a FIFO, a device or a
 * symbolic link (HML_PROFILE=/dev/null as root), which stay as they were. */
TEST(write_refuses_what_is_not_a_regular_file)
{
	char fifo[640], target[640], link_path[640], text[64] = "";
	struct stat st;
	FILE *f;

	path_of(fifo, sizeof(fifo), "out-fifo.json");
	CHECK(mkfifo(fifo, 0600) == 0);
	CHECK_FAILS(hml__profile_file_write(fifo, NULL, 0, NULL), HML_EINVALID,
	            "out-fifo.json': not a regular file (a FIFO)");
	CHECK(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
	path_of(target, sizeof(target), "target.txt");
	write_text(target, "kept");
	path_of(link_path, sizeof(link_path), "link.json");
	CHECK(symlink(target, link_path) == 0);
	CHECK_FAILS(hml__profile_file_write(link_path, NULL, 0, NULL), HML_EINVALID,
	            "link.json': not a regular file (a symbolic link)");
	CHECK(lstat(link_path, &st) == 0 && S_ISLNK(st.st_mode));
	CHECK((f = fopen(target, "r")) != NULL && fgets(text, sizeof(text), f) != NULL);
	if (f)
		fclose(f);
	CHECK_STR(text, "kept");
	CHECK_FAILS(hml__profile_file_write("/dev/null", NULL, 0, NULL), HML_EINVALID,
	            "(a character device)");
}

int main(void)
{
	if (tmp_dir_make("profile_file") < 0)
		return 1;
	RUN(round_trip);
	RUN(records_of_one_label_summed);
	RUN(swaps_round_trip);
	RUN(cpu_round_trip);
	RUN(region_not_entered);
	RUN(bad_files);
	RUN(write_refuses_what_is_not_a_regular_file);
	tmp_dir_remove();
	return check_report();
}
