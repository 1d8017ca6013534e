/* #pragma hml ml: no mode (the environment chooses), each named mode,
 * mode(EXPR) chosen at run time, interleave, shadow and db. */
#include <stdlib.h>

#pragma approx declare tensor_functor(f: [i, 0:1] = ([i]))

void modes(const double *a, double *y, int n)
{
#pragma hml ml in(f(a[0:n])) out(f(y[0:n]))
	for (int i = 0; i < n; i++)
		y[i] = a[i] + 1;
#pragma hml ml(off) in(f(a[0:n])) out(f(y[0:n])) label("off")
	y[0] = a[0];
#pragma hml ml(collect) in(f(a[0:n])) out(f(y[0:n])) label("collect") db("modes.h5")
	y[0] = a[0];
#pragma hml ml(infer) in(f(a[0:n])) out(f(y[0:n])) label("infer") model(getenv("MY_MODEL"))
	y[0] = a[0];
#pragma hml ml(interleave) interleave(4) in(f(a[0:n])) out(f(y[0:n])) label("interleave")
	y[0] = a[0];
#pragma hml ml(shadow) shadow(0.25) in(f(a[0:n])) out(f(y[0:n])) label("shadow")
	y[0] = a[0];
#pragma hml ml mode(n > 100 ? "infer" : "collect") in(f(a[0:n])) out(f(y[0:n])) label("runtime")
	y[0] = a[0];
}
