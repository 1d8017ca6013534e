void f(double *a)
{
#pragma approx ml(infer) inout(a)
	a[0] = 1;
}
