/*
 * tests/unit/qoi_series.c - the error over time (lib/store/qoi_series.h):
 * a QoI recorded over time compared record by record, one recorded at the
 * end only left out, steps that differ refused, and the JSON it records.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "fixtures.h"
#include "core/qoi_file.h"
#include "store/qoi_series.h"

static void path_of(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", tmpdir, name);
}

TEST(record_by_record)
{
	/* two records of two values: the surrogate off by 1 at step 10 and
	 * by 0, 3 at step 20 */
	double a[4] = { 1, 2, 3, 4 }, b[4] = { 2, 3, 3, 7 }, end[1] = { 5 };
	int64_t steps[2] = { 10, 20 }, shape[2] = { 2, 2 };
	hml__workflow_qoi q[2] = { { "final", "rmse", 0, NAN }, { "traj", "max_abs", 0, NAN } };
	hml__workflow w = { 0 };
	hml__qoi_series *s = NULL;
	char pa[640], pb[640];
	size_t n = 9;

	w.qoi = q;
	w.nqoi = 2;
	path_of(pa, sizeof(pa), "a.h5");
	path_of(pb, sizeof(pb), "b.h5");
	unlink(pa);
	unlink(pb);
	CHECK_OK(hml__qoi_file_write(pa, "final", end, HML_F64, 1, (int64_t[]){ 1 }));
	CHECK_OK(hml__qoi_file_write(pb, "final", end, HML_F64, 1, (int64_t[]){ 1 }));
	CHECK_OK(hml__qoi_file_write_steps(pa, "traj", steps, a, HML_F64, 2, shape));
	CHECK_OK(hml__qoi_file_write_steps(pb, "traj", steps, b, HML_F64, 2, shape));
	CHECK_OK(hml__qoi_over_time(&s, &n, &w, pa, pb, "the surrogate"));
	CHECK_EQ_INT(n, 1);   /* "final" has no steps */
	if (s && n == 1) {
		json_t *j = hml__qoi_series_json(s, n);
		char *text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);

		CHECK_STR(s[0].qoi->dataset, "traj");
		CHECK_EQ_INT(s[0].n, 2);
		CHECK_EQ_INT(s[0].steps[1], 20);
		CHECK_NEAR(s[0].error[0], 1.0, 0);          /* max_abs, the entry's metric */
		CHECK_NEAR(s[0].error[1], 3.0, 0);
		CHECK_NEAR(s[0].err[1].rmse, sqrt(4.5), 1e-15);
		CHECK_NEAR(s[0].rel_l2[0], sqrt(2.0 / 5.0), 1e-15);
		CHECK_STR(text, "[{\"dataset\":\"traj\",\"error\":[1.0,3.0],\"max_abs\":[1.0,3.0],"
		          "\"metric\":\"max_abs\",\"rel_l2\":[0.63245553203367588,0.59999999999999998],"
		          "\"rmse\":[1.0,2.1213203435596424],\"steps\":[10,20]}]");
		free(text);
		json_decref(j);
	}
	hml__qoi_series_free(s, n);
	/* Other steps in the surrogate's run: refused, naming the record. */
	CHECK_OK(hml__qoi_file_write_steps(pb, "traj", (int64_t[]){ 10, 30 }, b, HML_F64, 2, shape));
	CHECK_FAILS(hml__qoi_over_time(&s, &n, &w, pa, pb, "the surrogate"), HML_ESHAPE,
	            "quantity of interest 'traj': record 1 is step 20 in the accurate run but 30 "
	            "with the surrogate");
	CHECK(s == NULL && n == 0);
	/* No QoI over time at all: nothing, no error. */
	w.nqoi = 1;
	CHECK_OK(hml__qoi_over_time(&s, &n, &w, pa, pb, "the surrogate"));
	CHECK(s == NULL && n == 0);
}

int main(void)
{
	if (tmp_dir_make("qoi_series") < 0)
		return 1;
	RUN(record_by_record);
	tmp_dir_remove();
	return check_report();
}
