void f(double *a, double *b)
{
#pragma approx ml(infer) in(a[]) out(b)
	b[0] = a[0];
}
