#pragma approx declare tensor_functor(one: [i, j, 0:1] = ([i, j]))
void f(double *u, double v[8][8][8], int n)
{
#pragma hml declare shape(u[n][n][n])
#pragma approx ml(infer) in(one(u[1:n-1, 1:n-1])) out(one(v[1:n-1, 1:n-1]))
	v[0][0][0] = u[0];
}
