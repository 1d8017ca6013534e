/*
 * lib/deploy/cg_conv.h - the generated C of one conv layer's direct form
 * (internal to the C generator: cg_cnn.c and cg_cnnvec.c call it for every
 * conv layer of a CNN or cnnvec that does not take the im2col + sgemm path,
 * cg_conv_gemm.c, and for every conv layer of a build without a CBLAS).
 *
 * The layer is written as register-blocked loops: for each image row,
 * blocks of HML__CG_CONV_CB output channels x HML__CG_CONV_JB columns are summed in
 * local accumulators over (input channel, ky, kx), each input vector
 * loaded once per block of channels, the bias first and the activation
 * applied on the way out. The bounds are constants, so that the compiler
 * keeps the accumulators in vector registers (portable C: no intrinsics).
 * Padding is the caller's: the source planes are zero-padded far enough
 * for the kernel's reach, so the inner loops have no branch. The blocks
 * of (channel block, image row) of a layer of at least
 * HML__CG_CONV_PAR_MIN multiply-adds are shared out over OpenMP threads
 * when the generated function's `par` is true (a sample alone in a call:
 * the samples are spread over the threads otherwise).
 */
#ifndef HML_LIB_CG_CONV_H
#define HML_LIB_CG_CONV_H

#include <stdint.h>
#include <stdio.h>

/* One conv layer's direct form: where it reads, where it writes. */
typedef struct hml__cg_conv {
	const char *id;       /**< the model's id: weights hml_<id>_w<layer>, bias _b<layer> */
	int layer;
	int64_t in, out;      /**< channels */
	int kernel;           /**< odd, square */
	int64_t h, w;         /**< the output map (= the input map: "same" padding) */
	const char *act;      /**< NULL (identity) or the activation's function name */
	const char *src;      /**< C expression: the first input plane's origin */
	int64_t src_plane;    /**< floats per input plane */
	int64_t src_row;      /**< floats per input row (the padded width) */
	int64_t src_off;      /**< floats from the plane's origin to (-k/2, -k/2)'s input */
	const char *dst;      /**< C expression: output channel 0's (0, 0) */
	int64_t dst_plane;    /**< floats per output plane */
	int64_t dst_row;      /**< floats per output row */
} hml__cg_conv;

/* Output channels (fewer when the layer has fewer) and columns per
 * register block: 4 x 16 is 8 accumulators of 8 floats, which leaves
 * AVX2's 16 registers room for the inputs and the weight (a sketch of
 * miniWeather's 16 -> 16, 5x5 layer ran at 84 GFLOP/s on one core). */
#define HML__CG_CONV_CB 4
#define HML__CG_CONV_JB 16
/* A smaller layer stays on the calling thread even when a sample is alone:
 * miniWeather's 16 -> 16, 5x5 layer on 24 x 44 (6.8 million multiply-adds)
 * ran 2000 steps in 0.13-0.27 s on one thread and 0.27-0.34 s on two
 * (OMP_WAIT_POLICY=passive), 8-10 s on two with libgomp's default spinning
 * on a loaded 2-core machine: waking a thread costs more than the layer. */
#define HML__CG_CONV_PAR_MIN (1 << 25)
/* Floats past its end that a source buffer of the direct form must have
 * readable (the last block of a row reads whole vectors). */
#define HML__CG_CONV_SLACK HML__CG_CONV_JB

/** Write the layer's loops (statements at one tab's indent) to `f`. The
 * enclosing function has an int `par`. */
void hml__cg_put_conv_direct(FILE *f, const hml__cg_conv *c);

#endif
