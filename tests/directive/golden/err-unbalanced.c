void f(double *a, double *b, int n)
{
#pragma approx ml(infer) in(a[0:n) out(b)
	b[0] = a[0];
}
