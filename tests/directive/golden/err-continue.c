void f(double *a, double *b, int n)
{
	for (int i = 0; i < n; i++) {
#pragma approx ml(offline) in(a[i]) out(b[i])
		switch (i) {
		case 0:
			continue;
		default:
			b[i] = a[i];
		}
	}
}
