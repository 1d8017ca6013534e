void f(const double *S, double *p, int n)
{
#pragma hml ml in(S[0:n]) out(p) over(i)
	for (int i = 0; i < n; i++)
		p[i] = S[i];
}
