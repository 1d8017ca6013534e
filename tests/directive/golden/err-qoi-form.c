void f(double *price)
{
#pragma hml qoi(price)
}
