/* break and continue that stay inside the region (in its own loops and
 * switches) are allowed; a region's loop may break out of itself. */
void jumps(const double *a, double *y, int n)
{
#pragma approx declare tensor_functor(f: [i, 0:1] = ([i]))
#pragma approx ml(offline) in(f(a[0:n])) out(f(y[0:n])) label("jumps")
	for (int i = 0; i < n; i++) {
		if (a[i] < 0)
			continue;
		if (a[i] > 1e9)
			break;
		switch (i % 3) {
		case 0:
			y[i] = a[i];
			break;
		default:
			y[i] = -a[i];
		}
		for (int k = 0; k < 3; k++) {
			if (k == 1)
				break;
		}
		do {
			if (i == 2)
				continue;
		} while (0);
	}
}
