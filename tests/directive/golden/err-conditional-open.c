void f(double *a, double *b)
{
#pragma approx ml(infer) in(a) out(b)
	{
#ifdef X
		b[0] = a[0];
	}
#else
	}
#endif
}
