/* HPAC-ML: a region inside a loop body, one row per iteration: array
 * sections x[i:2], y[i/2], and a scalar. */
void pairs(const float *x, float *y, float *z, int n)
{
	for (int i = 0; i < n; i += 2) {
		float s = 0;
#pragma approx ml(offline) in(x[i:2]) out(y[i/2], s) label("row")
		{
			s = x[i] * x[i + 1];
			y[i / 2] = x[i] + x[i + 1];
		}
		z[i / 2] = s;
	}
}
