/*
 * An OpenMP parallel loop left as written, whose body computes locals and
 * holds two one-row regions (e2e/134-rows-omp.bats): HPAC-ML's
 * #pragma approx on scalars and #pragma hml on a local array, each a row
 * call per iteration from any thread. Prints the sums of both regions'
 * outputs; the quantity of interest is the cells' outputs.
 *
 * usage: rows-omp N [lose|SEED]   (lose: the collection file is replaced by
 * a folder after the loop, so that writing it at exit fails; a seed, as a
 * workflow passes one, is ignored)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000, i;
	double *v = malloc((size_t)n * sizeof(double)), *w = malloc((size_t)n * sizeof(double));
	double sv = 0, sw = 0;

	if (!v || !w || n < 1)
		return 1;
	#pragma omp parallel for schedule(dynamic, 7)
	for (i = 0; i < n; i++) {
		double a = (double)i / n, b = 1.0 - a * a, c;
		double p[2] = { a, (double)i }, q[2];
#pragma approx ml(infer) in(a, b) out(c) label("cell")
		c = a * b + 0.5;
#pragma hml ml(infer) in(p[0:2]) out(q[0:2]) label("pair")
		{
			q[0] = p[0] + 1;
			q[1] = 2 * p[1];
		}
		v[i] = c;
		w[i] = q[0] + q[1];
	}
	for (i = 0; i < n; i++) {
		sv += v[i];
		sw += w[i];
	}
#pragma hml qoi(v[0:n]) name("cell")
	if (argc > 2 && strcmp(argv[2], "lose") == 0 && getenv("HML_DB")) {
		remove(getenv("HML_DB"));
		mkdir(getenv("HML_DB"), 0700);
	}
	printf("cell %.6f\npair %.6f\n", sv, sw);
	free(v);
	free(w);
	return 0;
}
