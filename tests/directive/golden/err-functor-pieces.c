#pragma approx declare tensor_functor(two: [i, 0:2] = ([i], [i]))
void f(double *a, double *b, int n)
{
#pragma approx ml(infer) in(two(a[0:n])) out(b)
	b[0] = a[0];
}
