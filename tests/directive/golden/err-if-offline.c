void f(double *a, double *b, int k)
{
#pragma approx ml(offline) in(a) out(b) if(k > 1)
	b[0] = a[0];
}
