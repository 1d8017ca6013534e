#pragma approx declare tensor(t: g(a[0:n]))
void f(double *a, double *b)
{
#pragma approx ml(infer) in(t) out(b)
	b[0] = a[0];
}
