/*
 * tests/unit/conserve.c - an output that conserves a sum
 * (lib/core/conserve.h): the spec's grammar and its canonical form read
 * back as written (the contract between the workflow, the CLI that writes
 * HML_CONSERVE_<L> and the runtime that reads it), its box on a row shape,
 * and the correction: each row's sum over the box becomes its input's,
 * nothing outside the box changes, in float and in double.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "core/conserve.h"
#include "core/error.h"

static void round_trip(const char *spec, const char *canonical)
{
	hml__conserve c, back;
	char buf[128];

	CHECK_OK(hml__conserve_parse(&c, spec));
	CHECK_OK(hml__conserve_format(buf, sizeof(buf), &c));
	CHECK_STR(buf, canonical);
	CHECK_OK(hml__conserve_parse(&back, buf));
	CHECK(memcmp(&c, &back, sizeof(c)) == 0);
}

TEST(spec_round_trips)
{
	round_trip("0, 2:-2, 2:-2", "0,2:-2,2:-2");
	round_trip("0,2:-2,2:-2", "0,2:-2,2:-2");
	round_trip(" : , -1 ,3: , :7", ":,-1,3:,:7");
	round_trip("5", "5");
}

TEST(bad_specs)
{
	hml__conserve c;
	char small[4];

	CHECK_FAILS(hml__conserve_parse(&c, ""), HML_EINVALID, "conserve '': no dimension");
	CHECK_FAILS(hml__conserve_parse(&c, NULL), HML_EINVALID, "no dimension");
	CHECK_FAILS(hml__conserve_parse(&c, "0,2:x"), HML_EINVALID,
	            "conserve '0,2:x': 'x' is not an index");
	CHECK_FAILS(hml__conserve_parse(&c, "0,,1"), HML_EINVALID,
	            "conserve '0,,1': dimension 1 is empty");
	CHECK_FAILS(hml__conserve_parse(&c, "0 1"), HML_EINVALID, "'1' is not an index");
	CHECK_FAILS(hml__conserve_parse(&c, "0,1,2,3,4,5,6,7,8"), HML_EINVALID,
	            "more than 8 dimensions");
	CHECK_FAILS(hml__conserve_parse(&c, "99999999999999999999"), HML_EINVALID,
	            "is not an index");
	CHECK_OK(hml__conserve_parse(&c, "0,2:-2"));
	CHECK_FAILS(hml__conserve_format(small, sizeof(small), &c), HML_EINVALID,
	            "longer than 4 bytes");
}

TEST(box_on_a_row_shape)
{
	static const int64_t shape[] = { 4, 24, 44 };
	hml__conserve c;
	hml__conserve_box b;

	CHECK_OK(hml__conserve_parse(&c, "0, 2:-2, 2:-2"));
	CHECK_OK(hml__conserve_resolve(&b, &c, 3, shape));
	CHECK(b.lo[0] == 0 && b.hi[0] == 1 && b.lo[1] == 2 && b.hi[1] == 22 && b.lo[2] == 2 &&
	      b.hi[2] == 42);
	CHECK_EQ_INT(b.count, 20 * 40);
	CHECK_EQ_INT(b.row_size, 4 * 24 * 44);
	CHECK_OK(hml__conserve_parse(&c, "-1,:,:"));
	CHECK_OK(hml__conserve_resolve(&b, &c, 3, shape));
	CHECK(b.lo[0] == 3 && b.hi[0] == 4 && b.count == 24 * 44);
	CHECK_FAILS(hml__conserve_resolve(&b, &c, 2, shape), HML_EINVALID,
	            "conserve '-1,:,:': 3 dimensions, a row has 2 ([4, 24])");
	CHECK_OK(hml__conserve_parse(&c, "4,:,:"));
	CHECK_FAILS(hml__conserve_resolve(&b, &c, 3, shape), HML_EINVALID,
	            "conserve '4,:,:': index 4 is outside dimension 0 of extent 4");
	CHECK_OK(hml__conserve_parse(&c, "0,3:3,:"));
	CHECK_FAILS(hml__conserve_resolve(&b, &c, 3, shape), HML_EINVALID,
	            "range 3:3 of dimension 1 (extent 24) is empty or outside");
	CHECK_OK(hml__conserve_parse(&c, "0,:,40:50"));
	CHECK_FAILS(hml__conserve_resolve(&b, &c, 3, shape), HML_EINVALID,
	            "range 40:50 of dimension 2 (extent 44) is empty or outside");
}

/* Two rows of [2, 4, 5]; the box channel 1, rows 1:3, columns 1:-1. */
TEST(correction_conserves_the_box_and_nothing_else)
{
	static const int64_t shape[] = { 2, 4, 5 };
	enum { ROW = 40 };
	hml__conserve c;
	hml__conserve_box b;
	float xf[2 * ROW], yf[2 * ROW], before[2 * ROW];
	double xd[2 * ROW], yd[2 * ROW];

	for (int i = 0; i < 2 * ROW; i++) {
		xf[i] = (float)(0.5 + 0.01 * i);
		yf[i] = before[i] = (float)(0.5 + 0.013 * i - 0.002 * (i % 7));
		xd[i] = xf[i];
		yd[i] = yf[i];
	}
	CHECK_OK(hml__conserve_parse(&c, "1,1:3,1:-1"));
	CHECK_OK(hml__conserve_resolve(&b, &c, 3, shape));
	CHECK_EQ_INT(b.count, 6);
	hml__conserve_apply_f32(&b, xf, yf, 2);
	hml__conserve_apply_f64(&b, xd, yd, 2);
	for (int r = 0; r < 2; r++) {
		double sx = 0, sy = 0, sd = 0, moved = 0;

		for (int k = 1; k < 3; k++)
			for (int j = 1; j < 4; j++) {
				int at = r * ROW + 20 + k * 5 + j;

				sx += xf[at];
				sy += yf[at];
				sd += yd[at];
				moved += yf[at] - before[at];
			}
		CHECK_NEAR(sy, sx, 1e-6);
		CHECK_NEAR(sd, sx, 1e-12);
		CHECK(fabs(moved) > 1e-3);   /* the rows did need correcting */
	}
	/* outside the box: as the model gave it */
	for (int i = 0; i < 2 * ROW; i++) {
		int in_row = i % ROW, ch = in_row / 20, k = in_row % 20 / 5, j = in_row % 5;

		if (!(ch == 1 && k >= 1 && k < 3 && j >= 1 && j < 4))
			CHECK(yf[i] == before[i] && yd[i] == (double)before[i]);
	}
}

int main(void)
{
	RUN(spec_round_trips);
	RUN(bad_specs);
	RUN(box_on_a_row_shape);
	RUN(correction_conserves_the_box_and_nothing_else);
	return check_report();
}
