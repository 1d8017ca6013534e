#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	long n = 256, i;
	float *S = malloc(sizeof(float) * n), *X = malloc(sizeof(float) * n), *price = malloc(sizeof(float) * n);
	float x[20], y[10];

	for (i = 0; i < n; i++) {
		S[i] = (float)i; X[i] = 1.0f;
	}
#pragma hml ml in(S, X) out(price) over(i) label("opt")
	for (i = 0; i < n - 1; i++)
		price[i] = S[i] * 2 + X[i] + S[i + 1];
	for (int k = 0; k < 20; k++)
		x[k] = (float)k;
	for (int k = 0; k < 20; k += 2) {
#pragma approx ml(offline) in(x[k:2]) out(y[k/2]) label("row")
		y[k / 2] = x[k] + x[k + 1];
	}
#pragma hml qoi(price[0:n])
	printf("%f %f\n", price[10], y[3]);
	return 0;
}
