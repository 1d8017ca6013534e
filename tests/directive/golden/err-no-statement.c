void f(double *a, double *b)
{
	b[0] = a[0];
#pragma approx ml(infer) in(a) out(b)
}
