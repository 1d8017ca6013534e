/* HPAC-ML: ml(offline) on a single statement (a loop), a label that is an
 * expression, a strided slice and a functor with a range piece; the
 * directive continued over two lines. */
static const char *const names[] = { "even", "odd" };

void sweep(const float *x, float *y, int n, int k)
{
#pragma approx declare tensor_functor(win: [i, 0:3] = ([i-1:i+2]))
#pragma approx declare tensor_functor(pt: [i, 0:1] = ([i]))
#pragma approx ml(offline) in(win(x[1:n-1:2])) \
	out(pt(y[1:n-1:2])) label(names[k % 2])
	for (int i = 1; i < n - 1; i += 2)
		y[i] = x[i - 1] + x[i] + x[i + 1];
}
