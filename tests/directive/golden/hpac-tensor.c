/* HPAC-ML: declared functors and tensors, ml(infer) on a block with a
 * model and a label. */
#include <stdlib.h>

void toy(const double *a, const double *b, const double *c, double *y, int n)
{
#pragma approx declare tensor_functor(ifn: [i, 0:3] = ([i], [i], [i]))
#pragma approx declare tensor_functor(ofn: [i, 0:1] = ([i]))
#pragma approx declare tensor(tin: ifn(a[0:n], b[0:n], c[0:n]))
#pragma approx ml(infer) in(tin) out(ofn(y[0:n])) model("toy.pt") label("toy")
	{
		for (int i = 0; i < n; i++)
			y[i] = 2 * a[i] + b[i] + c[i];
	}
}
