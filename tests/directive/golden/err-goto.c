void f(double *a, double *b)
{
#pragma approx ml(infer) in(a) out(b)
	{
		if (a[0] < 0)
			goto out;
		b[0] = a[0];
	}
out:
	;
}
