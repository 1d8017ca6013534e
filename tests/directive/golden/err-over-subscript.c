void f(const double *S, double *p, int n)
{
	int i;
#pragma hml ml in(S) out(p) over(i)
	for (i = 0; i < n; i++)
		p[i] = S[2 * i];
}
