#pragma approx declare tensor_functor(f: [i, 0:1] = ([i]))
void f(double *a, double *b, int n)
{
#pragma approx ml(infer) in(f(a[n])) out(f(b[0:n]))
	b[0] = a[0];
}
