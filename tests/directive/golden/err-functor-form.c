#pragma approx declare tensor_functor(f: i = (j))
void f(double *a, double *b, int n)
{
#pragma approx ml(infer) in(f(a[0:n])) out(f(b[0:n]))
	b[0] = a[0];
}
