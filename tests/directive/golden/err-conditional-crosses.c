void f(double *a, double *b)
{
#if 1
#pragma approx ml(infer) in(a) out(b)
	b[0] = a[0];
#endif
	{
#if 1
		b[0] = 1;
	}
#endif
}
