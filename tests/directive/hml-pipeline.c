#include <stdio.h>
#include <stdlib.h>

/* A region annotated with #pragma hml only: over(i) derives the functors
 * from the loop, qoi records the result. price = S X + T - S/4, on
 * random inputs in [0, 1). Arguments: rows, seed. */
int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000, i;
	double *S = malloc(sizeof(double) * n), *X = malloc(sizeof(double) * n);
	double *T = malloc(sizeof(double) * n), *price = malloc(sizeof(double) * n);
	double sum = 0;

	srand(argc > 2 ? (unsigned)atoi(argv[2]) : 1u);
	for (i = 0; i < n; i++) {
		S[i] = rand() / (RAND_MAX + 1.0);
		X[i] = rand() / (RAND_MAX + 1.0);
		T[i] = rand() / (RAND_MAX + 1.0);
	}
#pragma hml ml in(S, X, T) out(price) over(i) label("opt")
	for (i = 0; i < n; i++)
		price[i] = S[i] * X[i] + T[i] - S[i] / 4;
#pragma hml qoi(price[0:n])
	for (i = 0; i < n; i++)
		sum += price[i];
	printf("sum %.6f\n", sum);
	free(S);
	free(X);
	free(T);
	free(price);
	return 0;
}
