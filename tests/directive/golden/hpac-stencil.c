/* A 5-point stencil over the interior of fields with a halo: the slices
 * [1:n+1] give the domain, the C declarations the row lengths (an array
 * parameter, a pointer to VLA rows). */
#define N 16

#pragma approx declare tensor_functor(five: [i, j, 0:5] = ([i-1, j], [i+1, j], [i, j-1:j+2]))
#pragma approx declare tensor_functor(one: [i, j, 0:1] = ([i, j]))

void fixed(double u[N + 2][N + 2], double v[N + 2][N + 2], int n)
{
#pragma approx declare tensor(halo: five(u[1:n+1, 1:n+1], u[1:n+1, 1:n+1], u[1:n+1, 1:n+1]))
#pragma approx ml(infer) in(halo) out(one(v[1:n+1, 1:n+1])) label("fixed")
	for (int i = 1; i <= n; i++)
		for (int j = 1; j <= n; j++)
			v[i][j] = u[i - 1][j] + u[i + 1][j] + u[i][j - 1] + u[i][j + 1] - 4 * u[i][j];
}

void vla(int n, double (*u)[n + 2], double (*v)[n + 2])
{
#pragma approx ml(infer) in(five(u[1:n+1, 1:n+1], u[1:n+1, 1:n+1], u[1:n+1, 1:n+1])) \
	out(one(v[1:n+1, 1:n+1])) label("vla")
	for (int i = 1; i <= n; i++)
		for (int j = 1; j <= n; j++)
			v[i][j] = u[i - 1][j] + u[i + 1][j] + u[i][j - 1] + u[i][j + 1] - 4 * u[i][j];
}
