void f(double *x, double *y, int n)
{
	for (int i = 0; i < n; i++) {
#pragma approx ml(offline) in(x[i:2, 0:1]) out(y[i])
		y[i] = x[i];
	}
}
