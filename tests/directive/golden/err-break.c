void f(double *a, double *b, int n)
{
	for (int i = 0; i < n; i++) {
#pragma approx ml(offline) in(a[i]) out(b[i])
		{
			if (a[i] < 0)
				break;
			b[i] = a[i];
		}
	}
}
