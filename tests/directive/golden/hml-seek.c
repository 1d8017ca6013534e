/* #pragma hml ml seek(ROWS): arrays of one batch's shape, moved on for
 * each batch of a loop; the last batch is shorter. */
void batches(const float *in, float *out, long n, long batch)
{
#pragma approx declare tensor_functor(r: [i, 0:2] = ([i, 0:2]))
#pragma approx declare tensor_functor(o: [i, 0:1] = ([i]))
	for (long b = 0; b < n; b += batch) {
		long rows = n - b < batch ? n - b : batch;
#pragma hml ml(collect) in(r(in[0:rows, 0:2])) out(o(out[0:rows])) seek(b) label("batch")
		for (long i = b; i < b + rows; i++)
			out[i] = in[2 * i] * in[2 * i + 1];
	}
}
