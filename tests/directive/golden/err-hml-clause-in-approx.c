void f(double *a, double *b, int n)
{
	int i;
#pragma approx ml(infer) in(a) out(b) over(i)
	for (i = 0; i < n; i++)
		b[i] = a[i];
}
