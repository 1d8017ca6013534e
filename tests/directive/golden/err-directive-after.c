void f(double *a, double *b)
{
#pragma approx ml(infer) in(a) out(b)
#pragma approx declare tensor_functor(g: [i, 0:1] = ([i]))
	b[0] = a[0];
}
