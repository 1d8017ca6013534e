void f(double *a, double *b)
{
#pragma approx ml(infer) in(a) outt(b)
	b[0] = a[0];
}
