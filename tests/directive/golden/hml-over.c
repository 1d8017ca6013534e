/* #pragma hml ml over(i): functors derived from the loop's subscripts
 * ([i], [i+1], [i-1]), loops with <, <= and ++i, a declared loop index. */
void price(const double *S, const double *X, const double *T, double *p, int lo, int hi)
{
	int i;
#pragma hml ml in(S, X, T) out(p) over(i) label("price")
	for (i = lo; i < hi; i++)
		p[i] = S[i] * X[i] + T[i];
#pragma hml ml(collect) in(S) out(p) over(k) label("diff")
	for (int k = 1; k <= hi - 2; ++k) {
		double d = S[k + 1] - S[k - 1];
		p[k] = d / 2;
	}
}
