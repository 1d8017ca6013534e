#include <stdio.h>
#include <stdlib.h>

/* The interior of fields with a halo of 2, recorded as quantities of
 * interest: a flat pointer with a declared shape, a C array, and a pointer
 * whose rows are whole (HPAC-ML's 0:HI rule) sliced in its first dimension. */
int main(void)
{
	long nv = 2, nz = 3, nx = 4, h = nz + 4, w = nx + 4;
	double *s = malloc(sizeof(double) * (size_t)(nv * h * w));
	static int a[5][6];
	double *r = malloc(sizeof(double) * 10 * 2);

	for (long i = 0; i < nv * h * w; i++)
		s[i] = (double)i;
	for (int i = 0; i < 5; i++)
		for (int j = 0; j < 6; j++)
			a[i][j] = 10 * i + j;
	for (int i = 0; i < 20; i++)
		r[i] = i;
#pragma hml declare shape(s[nv][h][w])
#pragma hml qoi(s[0:nv, 2:nz+2, 2:nx+2]) name("interior")
#pragma hml qoi(a[1:4, 2:5])
#pragma hml qoi(r[3:7, 0:2]) name("rows")
	printf("ok\n");
	free(s);
	free(r);
	return 0;
}
