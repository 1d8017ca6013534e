/* a 2-D slice of a pointer: the slice's bounds are no row length */
#pragma approx declare tensor_functor(one: [i, j, 0:1] = ([i, j]))
void f(double *u, double *v, int n)
{
#pragma approx ml(infer) in(one(u[1:n-1, 1:n-1])) out(one(v[1:n-1, 1:n-1]))
	v[0] = u[0];
}
