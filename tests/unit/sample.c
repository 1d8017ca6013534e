/*
 * tests/unit/sample.c - what a collecting region keeps: the rate, the
 * duplicates and the reservoir (the runtime's sample.h, seeded), the
 * collector writing them (the file holds the reservoir's rows however
 * often it flushes), the sampling attributes and compression of the
 * collection layout read back (lib/core/collection.h), and the
 * HML_COLLECT_* settings refused at region open.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>

#include "check.h"
#include "collect.h"
#include "core/collection.h"
#include "core/error.h"
#include "core/h5util.h"
#include "fixtures.h"
#include "hml/region.h"
#include "sample.h"

static const size_t dbl_rows[2] = { sizeof(double), sizeof(double) };

/* Feed rows 0..n-1 (input i, output 2i) in calls of varying sizes. */
static void feed(hml__sampler *s, int64_t n, double *kept_in, int64_t *kept)
{
	double in[97], out[97];
	int64_t at = 0, k = 0;

	while (at < n) {
		int64_t rows[2], m = 1 + at % 97, r;

		if (m > n - at)
			m = n - at;
		for (r = 0; r < m; r++) {
			in[r] = (double)(at + r);
			out[r] = 2.0 * (double)(at + r);
		}
		rows[0] = rows[1] = m;
		CHECK_OK(hml__sampler_filter(s, in, out, rows, m));
		for (r = 0; r < rows[0]; r++) {
			CHECK(out[r] == 2.0 * in[r]);
			if (kept_in)
				kept_in[k] = in[r];
			k++;
		}
		at += m;
	}
	*kept = k;
}

TEST(reservoir_is_uniform)
{
	hml__sample_cfg cfg = { 1.0, 2000, 0, 7 };
	hml__coll_sampling st;
	hml__sampler *s = NULL;
	const double *in, *out;
	const void *vi, *vo;
	int64_t kept, held, i, n = 200000, deciles[10] = { 0 };
	double mean = 0.0;

	CHECK_OK(hml__sampler_new(&s, &cfg, dbl_rows, "r"));
	feed(s, n, NULL, &kept);
	CHECK_EQ_INT(kept, 0);   /* all went to the reservoir */
	held = hml__sampler_rows(s, &vi, &vo);
	in = vi;
	out = vo;
	CHECK_EQ_INT(held, 2000);
	for (i = 0; i < held; i++) {
		CHECK(out[i] == 2.0 * in[i]);
		mean += in[i] / (double)held;
		deciles[(int64_t)in[i] * 10 / n]++;
	}
	/* The mean of 2000 uniform picks from 0..n-1: sd about n/155. */
	CHECK_NEAR(mean, (double)n / 2, (double)n / 155 * 4);
	for (i = 0; i < 10; i++)   /* each tenth 200 +- 4 sd */
		CHECK(deciles[i] > 140 && deciles[i] < 260);
	hml__sampler_stats(s, &st);
	CHECK_EQ_INT(st.rows_seen, n);
	CHECK_EQ_INT(st.rows_kept, 2000);
	CHECK_EQ_INT(st.dropped_reservoir, n - 2000);
	CHECK_EQ_INT(st.reservoir, 2000);
	hml__sampler_free(s);
}

TEST(reservoir_not_full_keeps_all_and_repeats)
{
	hml__sample_cfg cfg = { 1.0, 5000, 0, 3 };
	hml__sampler *a = NULL, *b = NULL;
	const void *ia, *oa, *ib, *ob;
	int64_t kept;

	CHECK_OK(hml__sampler_new(&a, &cfg, dbl_rows, "r"));
	feed(a, 1234, NULL, &kept);
	CHECK_EQ_INT(hml__sampler_rows(a, &ia, &oa), 1234);
	hml__sampler_free(a);

	/* The same seed and label: the same sample. */
	cfg.reservoir = 100;
	CHECK_OK(hml__sampler_new(&a, &cfg, dbl_rows, "r"));
	CHECK_OK(hml__sampler_new(&b, &cfg, dbl_rows, "r"));
	feed(a, 50000, NULL, &kept);
	feed(b, 50000, NULL, &kept);
	CHECK_EQ_INT(hml__sampler_rows(a, &ia, &oa), 100);
	CHECK_EQ_INT(hml__sampler_rows(b, &ib, &ob), 100);
	CHECK(memcmp(ia, ib, 100 * sizeof(double)) == 0);
	hml__sampler_free(a);
	hml__sampler_free(b);
}

TEST(rate_keeps_a_fraction_in_order)
{
	hml__sample_cfg cfg = { 0.25, 0, 0, 11 };
	hml__coll_sampling st;
	hml__sampler *s = NULL;
	double *kept_in = malloc(100000 * sizeof(double));
	int64_t kept, i;

	CHECK_OK(hml__sampler_new(&s, &cfg, dbl_rows, "r"));
	feed(s, 100000, kept_in, &kept);
	/* 25000 +- 4 sd (137) */
	CHECK(kept > 25000 - 550 && kept < 25000 + 550);
	for (i = 1; i < kept; i++)
		CHECK(kept_in[i] > kept_in[i - 1]);
	hml__sampler_stats(s, &st);
	CHECK_EQ_INT(st.rows_kept, kept);
	CHECK_EQ_INT(st.dropped_rate + st.rows_kept, 100000);
	hml__sampler_free(s);
	free(kept_in);
}

TEST(dedup_drops_exact_duplicates)
{
	hml__sample_cfg cfg = { 1.0, 0, 1, 0 };
	hml__coll_sampling st;
	hml__sampler *s = NULL;
	double in[10], out[10];
	int64_t rows[2], total = 0;
	int call, r;

	CHECK_OK(hml__sampler_new(&s, &cfg, dbl_rows, "r"));
	for (call = 0; call < 100; call++) {
		for (r = 0; r < 10; r++)
			in[r] = out[r] = (double)((call * 10 + r) % 300);
		rows[0] = rows[1] = 10;
		CHECK_OK(hml__sampler_filter(s, in, out, rows, 1));
		total += rows[0];
	}
	CHECK_EQ_INT(total, 300);
	hml__sampler_stats(s, &st);
	CHECK_EQ_INT(st.dropped_duplicate, 700);
	CHECK_EQ_INT(st.calls_seen, 100);
	/* -0.0 and 0.0 differ in their bytes: not exact duplicates. */
	in[0] = -0.0;
	rows[0] = rows[1] = 1;
	CHECK_OK(hml__sampler_filter(s, in, out, rows, 1));
	CHECK_EQ_INT(rows[0], 1);
	hml__sampler_free(s);
}

TEST(unequal_calls_are_whole)
{
	hml__sample_cfg cfg = { 1.0, 0, 1, 0 };
	hml__sampler *s = NULL;
	double in[4] = { 1, 2, 3, 4 }, out[1] = { 5 };
	int64_t rows[2] = { 4, 1 };

	CHECK_OK(hml__sampler_new(&s, &cfg, dbl_rows, "r"));
	CHECK_OK(hml__sampler_filter(s, in, out, rows, 1));
	CHECK(rows[0] == 4 && rows[1] == 1);
	rows[0] = 4;
	rows[1] = 1;
	CHECK_OK(hml__sampler_filter(s, in, out, rows, 1));
	CHECK(rows[0] == 0 && rows[1] == 0);
	hml__sampler_free(s);

	cfg.reservoir = 10;
	CHECK_OK(hml__sampler_new(&s, &cfg, dbl_rows, "r"));
	rows[0] = 4;
	rows[1] = 1;
	CHECK_FAILS(hml__sampler_filter(s, in, out, rows, 1), HML_ENOTSUPPORTED,
	            "region 'r': a reservoir needs as many output rows as input rows");
	hml__sampler_free(s);
}

/* A collector keeping a reservoir of 50 rows from 10000, flushed thrice. */
TEST(collector_writes_reservoir)
{
	hml__collector_desc d;
	hml__collector *c = NULL;
	hml__coll_sampling st;
	hml__coll_calls calls;
	hml__coll_data info;
	hid_t file, group, dset, cdset, dcpl;
	const char *path = tmp_path("res.h5");
	double in[100], out[100];
	int64_t call, r;

	memset(&d, 0, sizeof(d));
	d.path = path;
	d.label = "res";
	d.in_dtype = d.out_dtype = HML_F64;
	d.in_functor = d.out_functor = d.in_arrays = d.out_arrays = "x";
	d.in_domain = d.out_domain = "d";
	d.sample.reservoir = 50;
	d.sample.seed = 5;
	d.compression = "shuffle+deflate:6";
	CHECK_OK(hml__collector_open(&c, &d));
	for (call = 0; call < 100; call++) {
		for (r = 0; r < 100; r++)
			in[r] = out[r] = (double)(call * 100 + r);
		CHECK_OK(hml__collector_append(c, in, 100, out, 100, 0.01));
		if (call % 40 == 0)
			CHECK_OK(hml__collector_flush(c));
	}
	CHECK_OK(hml__collector_close(c));

	CHECK((file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT)) >= 0);
	CHECK((group = H5Gopen2(file, "res", H5P_DEFAULT)) >= 0);
	CHECK_OK(hml__coll_data_open(&dset, &info, group, path, "res", HML__COLL_IN));
	CHECK_EQ_INT(info.rows, 50);
	CHECK((dcpl = H5Dget_create_plist(dset)) >= 0);
	CHECK(H5Pget_nfilters(dcpl) == 2);
	{   /* chunks no larger than the reservoir */
		hsize_t chunk[2] = { 0, 0 };

		CHECK(H5Pget_chunk(dcpl, 2, chunk) >= 1);
		CHECK_EQ_INT(chunk[0], 50);
	}
	H5Pclose(dcpl);
	H5Dclose(dset);
	CHECK_OK(hml__coll_calls_open(&cdset, &calls, group, path, "res"));
	CHECK_EQ_INT(calls.ncalls, 1);
	CHECK_EQ_INT(calls.last.input_rows, 50);
	H5Dclose(cdset);
	CHECK_EQ_INT(hml__coll_sampling_get(group, path, "res", &st), 1);
	CHECK_EQ_INT(st.reservoir, 50);
	CHECK_EQ_INT(st.seed, 5);
	CHECK_EQ_INT(st.calls_seen, 100);
	CHECK_EQ_INT(st.rows_seen, 10000);
	CHECK_EQ_INT(st.rows_kept, 50);
	CHECK_EQ_INT(st.dropped_reservoir, 9950);
	CHECK_NEAR(st.rate, 1.0, 0);
	H5Gclose(group);
	H5Fclose(file);

	/* A second run appends its own reservoir, and the counts add up. */
	CHECK_OK(hml__collector_open(&c, &d));
	for (r = 0; r < 100; r++)
		in[r] = out[r] = (double)r;
	CHECK_OK(hml__collector_append(c, in, 100, out, 100, 0.01));
	CHECK_OK(hml__collector_close(c));
	CHECK((file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT)) >= 0);
	CHECK((group = H5Gopen2(file, "res", H5P_DEFAULT)) >= 0);
	CHECK_OK(hml__coll_data_open(&dset, &info, group, path, "res", HML__COLL_IN));
	CHECK_EQ_INT(info.rows, 100);
	H5Dclose(dset);
	CHECK_EQ_INT(hml__coll_sampling_get(group, path, "res", &st), 1);
	CHECK_EQ_INT(st.rows_seen, 10100);
	CHECK_EQ_INT(st.rows_kept, 100);
	H5Gclose(group);
	H5Fclose(file);
}

/* The layout's writer and reader agree; an unsampled group reads as 0. */
TEST(sampling_attrs_round_trip)
{
	hml__coll_sampling a = { 0.125, 7, 1, 99, 10, 20, 3, 15, 1, 1 }, b;
	hid_t file, group;
	const char *path = tmp_path("attrs.h5");

	CHECK((file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
	CHECK((group = H5Gcreate2(file, "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
	CHECK_EQ_INT(hml__coll_sampling_get(group, path, "g", &b), 0);
	CHECK_OK(hml__coll_sampling_set(group, &a));
	CHECK_EQ_INT(hml__coll_sampling_get(group, path, "g", &b), 1);
	CHECK(memcmp(&a, &b, sizeof(a)) == 0);
	CHECK_OK(hml__h5_attr_set_str(group, "sample_seed", "x"));
	CHECK_FAILS(hml__coll_sampling_get(group, path, "g", &b), HML_EINVALID,
	            "region 'g' in '");
	H5Gclose(group);
	H5Fclose(file);
}

TEST(compression_names)
{
	hml__coll_compression z;
	char buf[32];

	CHECK_OK(hml__coll_compression_parse(&z, "none"));
	hml__coll_compression_name(buf, sizeof(buf), &z);
	CHECK_STR(buf, "none");
	CHECK_OK(hml__coll_compression_parse(&z, "deflate"));
	hml__coll_compression_name(buf, sizeof(buf), &z);
	CHECK_STR(buf, "deflate:4");
	CHECK_OK(hml__coll_compression_parse(&z, "shuffle+deflate:9"));
	hml__coll_compression_name(buf, sizeof(buf), &z);
	CHECK_STR(buf, "shuffle+deflate:9");
	CHECK_OK(hml__coll_compression_parse(&z, "szip"));
	CHECK_FAILS(hml__coll_compression_parse(&z, "deflate:0"), HML_EINVALID,
	            "unknown compression 'deflate:0' (expected none, deflate:L");
	CHECK_FAILS(hml__coll_compression_parse(&z, "lz4"), HML_EINVALID,
	            "unknown compression 'lz4'");
}

/* Each bad setting: refused at region open, naming the variable. */
TEST(bad_settings_refused_at_open)
{
	static const struct { const char *var, *value, *msg; } bad[] = {
		{ "HML_COLLECT_RATE", "0", "invalid HML_COLLECT_RATE '0': expected a fraction in (0, 1]" },
		{ "HML_COLLECT_RATE", "-0.5", "invalid HML_COLLECT_RATE '-0.5'" },
		{ "HML_COLLECT_RATE", "1.5", "invalid HML_COLLECT_RATE '1.5'" },
		{ "HML_COLLECT_RATE", "half", "invalid HML_COLLECT_RATE 'half'" },
		{ "HML_COLLECT_RATE_R1", "2", "invalid HML_COLLECT_RATE_R1 '2'" },
		{ "HML_COLLECT_RESERVOIR", "0", "invalid HML_COLLECT_RESERVOIR '0': expected an integer from 1" },
		{ "HML_COLLECT_RESERVOIR", "-3", "invalid HML_COLLECT_RESERVOIR '-3'" },
		{ "HML_COLLECT_DEDUP", "yes", "invalid HML_COLLECT_DEDUP 'yes'" },
	};
	hml_region *r = NULL;
	size_t i;

	setenv("HML_MODE", "collect", 1);
	setenv("HML_DB", tmp_path("bad.h5"), 1);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv(bad[i].var, bad[i].value, 1);
		CHECK_FAILS(hml_region_open(&r, "r1", NULL), HML_EINVALID, bad[i].msg);
		CHECK(r == NULL);
		unsetenv(bad[i].var);
	}
	setenv("HML_COLLECT_RATE", "0.5", 1);
	setenv("HML_COLLECT_RESERVOIR", "10", 1);
	CHECK_OK(hml_region_open(&r, "r1", NULL));
	hml_region_free(r);
	unsetenv("HML_COLLECT_RATE");
	unsetenv("HML_COLLECT_RESERVOIR");
	unsetenv("HML_MODE");
	unsetenv("HML_DB");
}

int main(void)
{
	if (tmp_dir_make("sample") < 0)
		return 1;
	RUN(reservoir_is_uniform);
	RUN(reservoir_not_full_keeps_all_and_repeats);
	RUN(rate_keeps_a_fraction_in_order);
	RUN(dedup_drops_exact_duplicates);
	RUN(unequal_calls_are_whole);
	RUN(collector_writes_reservoir);
	RUN(sampling_attrs_round_trip);
	RUN(compression_names);
	RUN(bad_settings_refused_at_open);
	tmp_dir_remove();
	return check_report();
}
