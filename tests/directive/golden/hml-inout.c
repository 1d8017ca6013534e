/* #pragma hml ml inout: memory the region updates in place. */
void relax(double *field, int n)
{
#pragma approx declare tensor_functor(all: [0:n] = ([0:n]))
#pragma hml ml(collect) inout(all(field[0:n])) label("relax")
	for (int i = 1; i < n - 1; i++)
		field[i] = 0.5 * (field[i - 1] + field[i + 1]);
}
