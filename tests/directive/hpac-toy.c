#include <stdio.h>
#include <stdlib.h>

/* a toy region: y = 2a + b + c, one row per element */
int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	double *a = malloc(sizeof(double) * n), *b = malloc(sizeof(double) * n);
	double *c = malloc(sizeof(double) * n), *y = malloc(sizeof(double) * n);
	double sum = 0;

	for (int i = 0; i < n; i++) {
		a[i] = (double)i / n; b[i] = 1.0 - a[i]; c[i] = a[i] * a[i];
	}
#pragma approx declare tensor_functor(ifn: [i, 0:3] = ([i], [i], [i]))
#pragma approx declare tensor_functor(ofn: [i, 0:1] = ([i]))
#pragma approx declare tensor(tin: ifn(a[0:n], b[0:n], c[0:n]))
#pragma approx ml(infer) in(tin) out(ofn(y[0:n])) label("toy")
	{
		for (int i = 0; i < n; i++)
			y[i] = 2 * a[i] + b[i] + c[i];
	}
	for (int i = 0; i < n; i++)
		sum += y[i];
	printf("sum %.6f\n", sum);
	return 0;
}
