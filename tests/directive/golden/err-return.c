int f(double *a, double *b)
{
#pragma approx ml(infer) in(a) out(b)
	{
		if (a[0] < 0)
			return 1;
		b[0] = a[0];
	}
	return 0;
}
