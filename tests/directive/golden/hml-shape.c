/* #pragma hml declare shape: the extents of flat arrays (the first may be
 * left out), for slices that are not the whole array; a member array. */
struct grid {
	int n;
	double *t;
};

void flat(const double *u, double *v, int n, int m)
{
#pragma hml declare shape(u[][m])
#pragma hml declare shape(v[n][m])
#pragma approx declare tensor_functor(cross: [i, j, 0:4] = ([i-1, j], [i+1, j], [i, j-1], [i, j+1]))
#pragma approx declare tensor_functor(one: [i, j, 0:1] = ([i, j]))
#pragma approx ml(offline) in(cross(u[1:n-1, 1:m-1], u[1:n-1, 1:m-1], u[1:n-1, 1:m-1], u[1:n-1, 1:m-1])) \
	out(one(v[1:n-1, 1:m-1])) label("flat")
	for (int i = 1; i < n - 1; i++)
		for (int j = 1; j < m - 1; j++)
			v[i * m + j] = u[(i - 1) * m + j] + u[(i + 1) * m + j] + u[i * m + j - 1] + u[i * m + j + 1];
}

void member(struct grid *g, double *out)
{
#pragma hml declare shape(g->t[g->n][g->n])
#pragma hml declare shape(out[g->n][g->n])
#pragma hml ml in(one(g->t[0:g->n, 1:g->n-1])) out(one(out[0:g->n, 1:g->n-1])) label("member")
	for (int i = 0; i < g->n * g->n; i++)
		out[i] = 2 * g->t[i];
}
