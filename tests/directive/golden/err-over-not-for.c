void f(const double *S, double *p, int n)
{
	int i = 0;
#pragma hml ml in(S) out(p) over(i)
	while (i < n) {
		p[i] = S[i];
		i++;
	}
}
