void f(const double *S, double *p, int n)
{
#pragma hml ml in(S) out(p) over(i)
	for (int i = 0; i < n; i += 2)
		p[i] = S[i];
}
