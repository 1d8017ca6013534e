/* HPAC-ML: ml(predicated:COND) and ml(infer) if(COND): the model where the
 * condition holds, the original code elsewhere. */
void step(const double *a, double *y, int n, int iter)
{
#pragma approx declare tensor_functor(f: [i, 0:1] = ([i]))
#pragma approx ml(predicated: iter > 10) in(f(a[0:n])) out(f(y[0:n])) label("pred")
	for (int i = 0; i < n; i++)
		y[i] = a[i] * a[i];
#pragma approx ml(infer) in(f(a[0:n])) out(f(y[0:n])) if(iter % 2 == 0 && n > 4) label("cond")
	{
		for (int i = 0; i < n; i++)
			y[i] += a[i];
	}
}
