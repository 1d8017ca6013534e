/* Named feature dimensions (a transposing functor): Rodinia's video, an
 * int array laid out [x][y][frame], read as [frame, x, y]. The names t, x
 * and y are the functor's own, never C variables (t is one here); T, X and
 * Y come from the slices the named subscripts read. */
void track(int *I, double *est, int IszX, int IszY, int Nfr, int t)
{
#pragma approx declare tensor_functor(video: [t = 0:T, x = 0:X, y = 0:Y] = ([x, y, t]))
#pragma approx declare tensor_functor(track: [0:T, 0:2] = ([0:T, 0:2]))
#pragma hml ml in(video(I[0:IszX, 0:IszY, 0:Nfr])) out(track(est[0:Nfr, 0:2])) label("particlefilter")
	est[t] = 1;
}
