/* Regions inside the body of an OpenMP parallel loop, on values the
 * iteration computes in locals (scalars, a local array): one row per
 * iteration, from any thread, at that iteration's addresses (row calls);
 * the loop is left as written. */
#include <math.h>

void step(const double *u, double *v, double *w, int n)
{
	#pragma omp parallel for schedule(dynamic)
	for (int i = 0; i < n; i++) {
		double a = u[i] * u[i], b = sin(u[i]), c;
		double pair[2] = { a, b }, out2[2];
#pragma approx ml(offline) in(a, b) out(c) label("cell")
		c = a * b + 1.0;
#pragma hml ml(infer) in(pair[0:2]) out(out2[0:2]) label("pair") if(i % 2 == 0)
		{
			out2[0] = pair[0] + pair[1];
			out2[1] = pair[0] - pair[1];
		}
		v[i] = c;
		w[i] = out2[0] * out2[1];
	}
}
