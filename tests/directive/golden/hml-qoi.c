/* #pragma hml qoi: the quantity of interest, with and without a name. */
void report(const double *price, const float *field, int n, int m)
{
#pragma hml qoi(price[0:n])
#pragma hml qoi(field[m:n]) name("interior")
}
