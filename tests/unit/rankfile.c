/*
 * tests/unit/rankfile.c - the file each MPI rank collects into
 * (lib/core/rankfile.h): the name the runtime's collector writes is the
 * name the CLI parses back, one file per rank, and the rank comes from the
 * launchers' environment.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "collect.h"
#include "core/h5util.h"
#include "core/profile_file.h"
#include "core/qoi_file.h"
#include "core/rankfile.h"
#include "fixtures.h"
#include "hml/qoi.h"

static const char *const rank_vars[] = { "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
                                         "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", NULL };

static void env_clear(void)
{
	for (const char *const *v = rank_vars; *v; v++)
		unsetenv(*v);
}

TEST(names)
{
	char *p = NULL;

	CHECK_OK(hml__rankfile_path(&p, "data.h5", 3));
	CHECK_STR(p, "data.r0003.h5");
	free(p);
	CHECK_OK(hml__rankfile_path(&p, "/x.y/data", 12));
	CHECK_STR(p, "/x.y/data.r0012");
	free(p);
	CHECK_OK(hml__rankfile_path(&p, "/x/.h5", 0));
	CHECK_STR(p, "/x/.h5.r0000");
	free(p);
	CHECK_OK(hml__rankfile_path(&p, "a.b.h5", 12345));
	CHECK_STR(p, "a.b.r12345.h5");
	free(p);
	CHECK_FAILS(hml__rankfile_path(&p, "", 0), HML_EINVALID, "empty");
	CHECK_FAILS(hml__rankfile_path(&p, "d.h5", -1), HML_EINVALID, "rank -1");
	CHECK_FAILS(hml__rankfile_path(&p, "d.h5", HML__RANK_MAX + 1), HML_EINVALID,
	            "out of range");
	CHECK(p == NULL);
}

/* What hml__rankfile_path() makes, hml__rankfile_parse() reads back; other
 * names are no rank's. */
TEST(round_trip)
{
	static const char *const paths[] = { "data.h5", "/d/x.y/data", "/x/.h5", "a.b.h5",
	                                     "r.r0001.h5", NULL };
	static const int ranks[] = { 0, 1, 9, 10, 999, 9999, 10000, HML__RANK_MAX };

	for (const char *const *path = paths; *path; path++)
		for (size_t i = 0; i < sizeof(ranks) / sizeof(ranks[0]); i++) {
			char *p = NULL;

			CHECK_OK(hml__rankfile_path(&p, *path, ranks[i]));
			CHECK_EQ_INT(hml__rankfile_parse(*path, p), ranks[i]);
			free(p);
		}
	CHECK_EQ_INT(hml__rankfile_parse("data.h5", "data.h5"), -1);
	CHECK_EQ_INT(hml__rankfile_parse("data.h5", "data.r003.h5"), -1);
	CHECK_EQ_INT(hml__rankfile_parse("data.h5", "data.r00003.h5"), -1);
	CHECK_EQ_INT(hml__rankfile_parse("data.h5", "data.r0003.h5x"), -1);
	CHECK_EQ_INT(hml__rankfile_parse("data.h5", "data.r0003"), -1);
	CHECK_EQ_INT(hml__rankfile_parse("data.h5", "datb.r0003.h5"), -1);
	CHECK_EQ_INT(hml__rankfile_parse("data.h5", "data.r+003.h5"), -1);
	CHECK_EQ_INT(hml__rankfile_parse("data.h5", NULL), -1);
}

TEST(environment)
{
	int rank, size;

	env_clear();
	CHECK_EQ_INT(hml__rank_from_env(&rank, &size), 0);
	CHECK_EQ_INT(rank, -1);
	CHECK_EQ_INT(size, 0);
	setenv("OMPI_COMM_WORLD_RANK", "2", 1);
	setenv("OMPI_COMM_WORLD_SIZE", "3", 1);
	CHECK_EQ_INT(hml__rank_from_env(&rank, &size), 1);
	CHECK_EQ_INT(rank, 2);
	CHECK_EQ_INT(size, 3);
	setenv("OMPI_COMM_WORLD_RANK", "0", 1);
	setenv("OMPI_COMM_WORLD_SIZE", "1", 1);
	CHECK_EQ_INT(hml__rank_from_env(&rank, &size), 0);   /* one rank: HML_DB itself */
	env_clear();
	setenv("PMI_RANK", "1", 1);
	setenv("PMI_SIZE", "4", 1);
	CHECK_EQ_INT(hml__rank_from_env(&rank, &size), 1);
	CHECK_EQ_INT(rank, 1);
	env_clear();
	setenv("PMIX_RANK", "0", 1);   /* no size: taken as one of several */
	CHECK_EQ_INT(hml__rank_from_env(&rank, &size), 1);
	CHECK_EQ_INT(size, 0);
	/* ... unless Open MPI says it started the process as a singleton (no
	 * launcher: PMIX_RANK=0 and no size), which is one process. */
	setenv(HML__SINGLETON_ENV, HML__SINGLETON_VALUE, 1);
	CHECK_EQ_INT(hml__rank_from_env(&rank, &size), 0);
	CHECK(rank == 0 && size == 1);
	setenv(HML__SINGLETON_ENV, "pmi", 1);
	CHECK_EQ_INT(hml__rank_from_env(&rank, &size), 1);
	unsetenv(HML__SINGLETON_ENV);
	setenv("PMIX_RANK", "x1", 1);
	CHECK_FAILS(hml__rank_from_env(&rank, &size), HML_EINVALID,
	            "'PMIX_RANK' is not a rank: 'x1'");
	env_clear();
	setenv("PMI_RANK", "4", 1);
	setenv("PMI_SIZE", "4", 1);
	CHECK_FAILS(hml__rank_from_env(&rank, &size), HML_EINVALID, "not below the size 4");
	setenv("PMI_SIZE", "0", 1);
	CHECK_FAILS(hml__rank_from_env(&rank, &size), HML_EINVALID, "'PMI_SIZE' is not a size");
	env_clear();
}

static void collect_one(const char *db)
{
	static const float in[4] = { 1, 2, 3, 4 }, out[2] = { 5, 6 };
	hml__collector_desc d;
	hml__collector *c = NULL;

	memset(&d, 0, sizeof(d));
	d.path = db;
	d.label = "r";
	d.in_dtype = d.out_dtype = HML_F32;
	d.in_ndim = d.out_ndim = 1;
	d.in_shape[0] = 2;
	d.out_shape[0] = 1;
	d.in_functor = d.out_functor = d.in_arrays = d.out_arrays = "x";
	d.in_domain = d.out_domain = "0:2";
	CHECK_OK(hml__collector_open(&c, &d));
	if (!c)
		return;
	CHECK_OK(hml__collector_append(c, in, 2, out, 2, 0.0));
	CHECK_OK(hml__collector_close(c));
}

/* The collector writes the rank's file, never HML_DB itself, and two
 * ranks two files. */
TEST(collector_writes_the_rank_file)
{
	const char *db = tmp_path("data.h5");
	char *r0 = NULL, *r1 = NULL;

	CHECK_OK(hml__rankfile_path(&r0, db, 0));
	CHECK_OK(hml__rankfile_path(&r1, db, 1));
	setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
	setenv("OMPI_COMM_WORLD_RANK", "0", 1);
	CHECK_OK(hml__collector_probe(db));
	collect_one(db);
	setenv("OMPI_COMM_WORLD_RANK", "1", 1);
	collect_one(db);
	CHECK(access(r0, F_OK) == 0);
	CHECK(access(r1, F_OK) == 0);
	CHECK(access(db, F_OK) != 0);
	/* A rank's file is held to HML_DB's rules: a symbolic link in its
	 * place is refused and left alone. */
	unlink(r1);
	CHECK(symlink(r0, r1) == 0);
	CHECK_FAILS(hml__collector_probe(db), HML_EINVALID, "r0001.h5': not a regular file (a symbolic link)");
	unlink(r1);
	setenv("OMPI_COMM_WORLD_RANK", "7", 1);
	CHECK_FAILS(hml__collector_probe(db), HML_EINVALID, "not below the size 2");
	env_clear();
	collect_one(db);   /* one process: HML_DB itself */
	CHECK(access(db, F_OK) == 0);
	unlink(r0);
	unlink(r1);
	free(r0);
	free(r1);
}

/* HML_QOI under MPI: each rank writes its rank's file through
 * hml_qoi_write() (the writer), and the CLI's reader reads them as one,
 * in rank order; a rank that wrote nothing is named. */
TEST(qoi_round_trip)
{
	const char *qoi = tmp_path("qoi.h5");
	double v[2], *got = NULL;
	size_t n = 0;
	char *own = NULL;

	setenv("HML_QOI", qoi, 1);
	setenv("OMPI_COMM_WORLD_SIZE", "3", 1);
	for (int k = 0; k < 3; k++) {
		char r[8];

		snprintf(r, sizeof(r), "%d", k);
		setenv("OMPI_COMM_WORLD_RANK", r, 1);
		v[0] = 10.0 * k;
		v[1] = 10.0 * k + 1;
		CHECK_OK(HML_QOI_WRITE_1D("q", v, HML_F64, k == 2 ? 1 : 2));
	}
	CHECK(access(qoi, F_OK) != 0);   /* no rank wrote HML_QOI itself */
	CHECK_OK(hml__qoi_file_read_ranks(qoi, 3, "q", &got, &n));
	CHECK_EQ_INT((int)n, 5);
	if (got && n == 5) {
		CHECK(got[0] == 0 && got[1] == 1 && got[2] == 10 && got[3] == 11 && got[4] == 20);
	}
	free(got);
	CHECK_FAILS(hml__qoi_file_read_ranks(qoi, 4, "q", &got, &n), HML_ENOTFOUND,
	            "rank 3 of 4 wrote no QoI file");
	CHECK(got == NULL && n == 0);
	CHECK_FAILS(hml__qoi_file_read_ranks(qoi, 3, "nope", &got, &n), HML_ENOTFOUND,
	            "no quantity of interest 'nope'");
	/* One process: HML_QOI itself, read with ranks 1. */
	env_clear();
	CHECK_OK(hml__rankfile_own(&own, qoi));
	CHECK_STR(own, qoi);
	free(own);
	CHECK_OK(HML_QOI_WRITE_1D("q", v, HML_F64, 2));
	CHECK_OK(hml__qoi_file_read_ranks(qoi, 1, "q", &got, &n));
	CHECK_EQ_INT((int)n, 2);
	free(got);
	unsetenv("HML_QOI");
}

/* HML_PROFILE under MPI: the name each rank writes (hml__rankfile_own,
 * as the runtime's exit handler asks it) is the one the reader reads, and
 * the ranks' records are summed. */
TEST(profile_round_trip)
{
	const char *prof = tmp_path("prof.json");
	hml__profile_record rec, got;
	char *own = NULL;

	memset(&rec, 0, sizeof(rec));
	snprintf(rec.label, sizeof(rec.label), "r");
	snprintf(rec.mode, sizeof(rec.mode), "infer");
	setenv("OMPI_COMM_WORLD_SIZE", "3", 1);
	for (int k = 0; k < 3; k++) {
		char r[8];

		snprintf(r, sizeof(r), "%d", k);
		setenv("OMPI_COMM_WORLD_RANK", r, 1);
		rec.stats.calls = (uint64_t)k + 1;
		rec.stats.model_calls = (uint64_t)k + 1;
		rec.stats.region_s = 0.5 * (k + 1);
		snprintf(rec.label, sizeof(rec.label), "%s", k == 1 ? "other" : "r");
		CHECK_OK(hml__rankfile_own(&own, prof));
		CHECK_OK(hml__profile_file_write(own, &rec, 1, NULL));
		free(own);
		own = NULL;
	}
	env_clear();
	CHECK_OK(hml__profile_file_find_ranks(prof, 3, "r", &got));   /* ranks 0 and 2 */
	CHECK(got.stats.calls == 4 && got.stats.model_calls == 4);
	CHECK(got.stats.region_s == 2.0);
	CHECK_STR(got.mode, "infer");
	CHECK_FAILS(hml__profile_file_find_ranks(prof, 3, "none", &got), HML_ENOTFOUND,
	            "no rank of 3 entered region 'none'");
	CHECK_FAILS(hml__profile_file_find_ranks(prof, 4, "r", &got), HML_EIO,
	            "prof.r0003.json");
}

int main(void)
{
	if (tmp_dir_make("rankfile") < 0)
		return 1;
	hml__h5_init();
	RUN(names);
	RUN(round_trip);
	RUN(environment);
	RUN(collector_writes_the_rank_file);
	RUN(qoi_round_trip);
	RUN(profile_round_trip);
	tmp_dir_remove();
	return check_report();
}
