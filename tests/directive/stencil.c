#include <stdio.h>
#include <stdlib.h>

/* A 2-D 5-point stencil over the interior of fields with a halo of one
 * (as workflows/heat): three arrays of the same values, declared three
 * ways, each read by a region whose slices [1:n+1] are not its shape.
 * u[i][j] = 1000 i + j, so a collected row names the cells it read. */
#define N 6

static void step_array(double u[N + 2][N + 2], double v[N + 2][N + 2], int n)
{
#pragma approx declare tensor_functor(five: [i, j, 0:5] = ([i-1, j], [i+1, j], [i, j-1:j+2]))
#pragma approx declare tensor_functor(one: [i, j, 0:1] = ([i, j]))
#pragma approx declare tensor(halo: five(u[1:n+1, 1:n+1], u[1:n+1, 1:n+1], u[1:n+1, 1:n+1]))
#pragma approx ml(offline) in(halo) out(one(v[1:n+1, 1:n+1])) label("array")
	for (int i = 1; i <= n; i++)
		for (int j = 1; j <= n; j++)
			v[i][j] = u[i - 1][j] + u[i + 1][j] + u[i][j - 1] + u[i][j + 1] - 4 * u[i][j];
}

static void step_vla(int n, double (*u)[n + 2], double (*v)[n + 2])
{
#pragma approx declare tensor(halo: five(u[1:n+1, 1:n+1], u[1:n+1, 1:n+1], u[1:n+1, 1:n+1]))
#pragma approx ml(offline) in(halo) out(one(v[1:n+1, 1:n+1])) label("vla")
	for (int i = 1; i <= n; i++)
		for (int j = 1; j <= n; j++)
			v[i][j] = u[i - 1][j] + u[i + 1][j] + u[i][j - 1] + u[i][j + 1] - 4 * u[i][j];
}

static void step_flat(int n, const double *u, double *v)
{
	int m = n + 2;
#pragma hml declare shape(u[][n+2])
#pragma hml declare shape(v[n+2][n+2])
#pragma approx declare tensor(halo: five(u[1:n+1, 1:n+1], u[1:n+1, 1:n+1], u[1:n+1, 1:n+1]))
#pragma approx ml(offline) in(halo) out(one(v[1:n+1, 1:n+1])) label("flat")
	for (int i = 1; i <= n; i++)
		for (int j = 1; j <= n; j++)
			v[i * m + j] = u[(i - 1) * m + j] + u[(i + 1) * m + j] + u[i * m + j - 1] +
			               u[i * m + j + 1] - 4 * u[i * m + j];
}

int main(void)
{
	static double a[N + 2][N + 2], b[N + 2][N + 2];
	double (*u)[N + 2] = malloc(sizeof(double[N + 2][N + 2]));
	double (*v)[N + 2] = malloc(sizeof(double[N + 2][N + 2]));
	double *fu = malloc(sizeof(double) * (N + 2) * (N + 2));
	double *fv = malloc(sizeof(double) * (N + 2) * (N + 2));
	double sum = 0;

	for (int i = 0; i < N + 2; i++)
		for (int j = 0; j < N + 2; j++)
			a[i][j] = u[i][j] = fu[i * (N + 2) + j] = 1000.0 * i + j;
	step_array(a, b, N);
	step_vla(N, u, v);
	step_flat(N, fu, fv);
	for (int i = 1; i <= N; i++)
		for (int j = 1; j <= N; j++)
			sum += b[i][j] + v[i][j] + fv[i * (N + 2) + j];
	printf("%g\n", sum);
	free(u);
	free(v);
	free(fu);
	free(fv);
	return 0;
}
