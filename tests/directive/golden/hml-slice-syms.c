/* A functor's symbols from the slices its pieces read: 0:T and 0:S (T, S
 * are no C variables here), 0:nz+4 and 0:nx+4 from slices 0:h, 0:w. */
void video(int *px, double *est, long V, long nt, long ns)
{
#pragma approx declare tensor_functor(video_in: [v, 0:T, 0:S, 0:S] = ([v, 0:T, 0:S, 0:S]))
#pragma approx declare tensor_functor(video_out: [v, 0:T, 0:2] = ([v, 0:T, 0:2]))
#pragma hml ml in(video_in(px[0:V, 0:nt, 0:ns, 0:ns])) out(video_out(est[0:V, 0:nt, 0:2])) label("pf")
	est[0] = 1;
}

void state(double *st, long h, long w)
{
#pragma approx declare tensor_functor(whole: [0:4, 0:nz+4, 0:nx+4] = ([0:4, 0:nz+4, 0:nx+4]))
#pragma hml ml inout(whole(st[0:4, 0:h, 0:w])) label("mw")
	st[0] = 1;
}
