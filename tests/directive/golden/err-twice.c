void f(double *a, double *b)
{
#pragma approx ml(infer) in(a) in(b) out(b)
	b[0] = a[0];
}
