/* An outside application annotated only with HPAC-ML's directives, built
 * through hml_target_directives() (hml cc) against an installed hml or
 * the build tree: a region that doubles an array, checked by value in
 * whatever mode HML_MODE names (off, or collect into HML_DB). */
#include <stdio.h>

#define N 8

#pragma approx declare tensor_functor(one: [i, 0:1] = ([i]))

int main(void)
{
	double x[N], y[N];
	int i;

	for (i = 0; i < N; i++)
		x[i] = i;
#pragma approx declare tensor(xs: one(x[0:N]))
#pragma approx ml(offline) in(xs) out(one(y[0:N])) label("double")
	for (i = 0; i < N; i++)
		y[i] = 2 * x[i];
	printf("annotated: y[7] = %g\n", y[7]);
	return y[7] == 14.0 ? 0 : 1;
}
