void f(double *a, double *b)
{
#pragma hml ml out(b)
	b[0] = a[0];
}
