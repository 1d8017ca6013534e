/*
 * lib/deploy/cg_gen.h - the C generator's state while it writes one file,
 * and the emitters the driver (codegen.c) calls, one file per part of the
 * generated source (private to lib/deploy/codegen.c and the cg_*.c files
 * named below; the public entry is codegen.h):
 *
 *   cg_consts.c     the weights as float constants, the categorical
 *                   features' tables, the activation functions
 *   cg_mlp.c        the MLP: row and block kernels, its sgemm path
 *   cg_conv_gemm.c  a conv layer as im2col + sgemm, and its scratch
 *   cg_cnn.c        the CNN on one sample, and the per-sample forwards a
 *                   CNN and a cnnvec share
 *   cg_cnnvec.c     the cnnvec (conv + pool layers, then linear) on one sample
 *
 * A conv layer's direct form is cg_conv.h's. Every emitter writes to g->f
 * and reports no error of its own: the driver checks ferror() once.
 */
#ifndef HML_LIB_CG_GEN_H
#define HML_LIB_CG_GEN_H

#include <stdint.h>
#include <stdio.h>

#include "deploy/cg_model.h"

typedef struct hml__cg_gen {
	FILE *f;
	const hml__cg_model *m;
	const char *id;
	char up[64];       /* the id in upper case */
	int br;            /* MLP rows per block */
	int64_t maxw;      /* widest hidden layer */
	int chunk;         /* MLP sgemm path: rows per chunk */
	int gemm_rows;     /* MLP sgemm path: from this many rows; 0: no such path */
} hml__cg_gen;

/* cg_consts.c */

/** Each layer's folded weights and bias, and the input normalisation, as
 * static const float arrays. Errors: HML_ENOMEM. */
int hml__cg_put_constants(hml__cg_gen *g);

/** The tables of an MLP's categorical features (only when m->ncat > 0). */
void hml__cg_put_categorical(hml__cg_gen *g);

/** hml_<id>_<act>() for every activation the model uses, and the
 * branch-free exp/erfc/tanh they need. */
void hml__cg_put_activations(hml__cg_gen *g);

/* cg_mlp.c */

/** 1 when MLP layer l takes the sgemm path (wide enough inputs and
 * outputs; never a first layer with categorical features). */
int hml__cg_mlp_gemm_layer(const hml__cg_model *m, int l);

/** Set g->gemm_rows and g->chunk of an MLP (after g->br and g->maxw);
 * left 0 when no layer takes the sgemm path. */
void hml__cg_plan_gemm(hml__cg_gen *g);

/** The MLP's kernels and hml_<id>_forward_f32 / _f64 / _i32. */
void hml__cg_put_mlp(hml__cg_gen *g);

/* cg_conv_gemm.c */

/** OpenBLAS's cblas_sgemm declaration, as the generated source states it. */
extern const char hml__cg_cblas_decl[];

/** 1 when conv layer l takes the im2col + sgemm form. */
int hml__cg_conv_gemm_layer(const hml__cg_model *m, int l);

/** Conv layer l (an h x w map) as im2col + sgemm, from the padded planes
 * `src` (plane floats each, rows of wp floats, the map at `off` + the
 * kernel's reach) into `dst` ([out][h * w]), without the activation. */
void hml__cg_put_conv_gemm(hml__cg_gen *g, int l, int64_t h, int64_t w, long long plane,
                           long long wp, int off, const char *src, const char *dst);

/** Floats of sgemm scratch a CNN or cnnvec on an h x w input needs: the
 * largest column tile and, when `outs`, the largest conv result; 0
 * without a gemm layer. */
int64_t hml__cg_conv_gemm_scratch(const hml__cg_model *m, int64_t h, int64_t w, int outs);

/** #define HML_<ID>_GSCRATCH (n floats with CBLAS, else 0), and sgemm's
 * declaration when n > 0. */
void hml__cg_put_gemm_scratch(hml__cg_gen *g, int64_t n);

/* cg_cnn.c */

/** The CNN's hml_<id>_sample and its forwards. */
void hml__cg_put_cnn(hml__cg_gen *g);

/** #define HML_<ID>_GSCRATCH (hml__cg_put_gemm_scratch) and the head of
 * `static void hml_<id>_sample(x, y, buf, par)` up to its opening brace,
 * its comment "buf: HML_<ID>_SCRATCH floats<note>". */
void hml__cg_put_sample_head(hml__cg_gen *g, int64_t gscratch, const char *note);

/** hml_<id>_forward_f32 / _f64 / _i32 of a CNN or cnnvec over its
 * hml_<id>_sample, samples of `nin` and `nout` floats. */
void hml__cg_put_sample_forwards(hml__cg_gen *g, long long nin, long long nout);

/* cg_cnnvec.c */

/** The cnnvec's hml_<id>_sample and its forwards. */
void hml__cg_put_cnnvec(hml__cg_gen *g);

#endif
