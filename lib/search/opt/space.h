/*
 * lib/search/opt/space.h - the search space of hml search (internal).
 *
 * A search space is a JSON object, one member per parameter, documented in
 * hml-workflow(5) (section SEARCH SPACE):
 *
 *   {
 *     "layers":    {"type": "int",    "low": 1, "high": 4},
 *     "width":     {"type": "int",    "low": 8, "high": 256, "log": true},
 *     "width_2":   {"type": "int",    "low": 8, "high": 256, "log": true,
 *                   "when": {"parent": "layers", "min": 2}},
 *     "activation":{"type": "choice", "values": ["relu", "tanh", "gelu"]},
 *     "batch":     {"type": "choice", "values": [64, 128, 256]},
 *     "lr":        {"type": "float",  "low": 1e-4, "high": 1e-2, "log": true},
 *     "optimizer": {"type": "choice", "values": ["adam", "sgd"]},
 *     "momentum":  {"type": "float",  "low": 0, "high": 0.99,
 *                   "when": {"parent": "optimizer", "values": ["sgd"]}}
 *   }
 *
 * A parameter with "when" exists only when its parent exists and the
 * condition holds ("min"/"max" inclusive bounds on a numeric parent,
 * "values" a list of the parent's values); the parent must be declared
 * before its children, so conditions never form a cycle.
 *
 * The optimiser sees a point of the unit cube [0,1]^dim:
 *  - int and float: one coordinate, linear in the value or in its logarithm
 *    ("log": true); an int owns the interval of width 1/(high-low+1) around
 *    each value (on the log scale when "log");
 *  - choice of numbers: one ordinal coordinate (the values, in the order
 *    listed, split [0,1] into equal cells): ordered settings such as batch
 *    sizes keep their order and cost one dimension;
 *  - choice of strings: one-hot, one coordinate per value (decoded by the
 *    largest coordinate): names have no order, and an ordinal code would
 *    tell the Gaussian process that "relu" lies between "tanh" and "gelu";
 *  - the coordinates of an inactive parameter are 0.
 * A sample is a JSON object holding the active parameters only: ints as
 * JSON integers, floats as reals, choices as the listed value.
 */
#ifndef HML_LIB_SPACE_H
#define HML_LIB_SPACE_H

#include <stddef.h>

#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hml__space hml__space;

/**
 * Parse a search space from a JSON object (the object is not kept).
 * origin names it in messages (a file, "regions[0].model.search_space");
 * may be NULL. *out is yours; free it with hml__space_free().
 * Errors: HML_EINVALID, one line naming the key, for example
 * "search space 'mlp.json': key 'lr.type': unknown type 'real' (expected
 * int, float or choice)", "... key 'lr': low 0.1 is greater than high 0.01",
 * "... key 'activation.values' is empty", "... key 'width_2.when.parent':
 * unknown parent 'layrs'", "... no parameters"; HML_ENOMEM.
 */
int hml__space_parse(hml__space **out, const json_t *spec, const char *origin);

/**
 * Read a search space from a JSON file. A file whose top level has a
 * "search_space" object (a model family's models/<family>.json) gives that
 * object. Duplicate keys are refused.
 * Errors: those of hml__space_parse() (origin: the path); HML_EIO
 * "cannot read search space 'PATH': <reason>"; HML_EINVALID
 * "search space 'PATH': invalid JSON: <text> (line L, column C)".
 */
int hml__space_load(hml__space **out, const char *path);

/** The space object hml__space_load() parses, unparsed (*out yours): read
 *  once, bounded (lib/core/read_file.h); its errors but those of parsing. */
int hml__space_read(json_t **out, const char *path);

/** Free a space (NULL-safe). */
void hml__space_free(hml__space *s);

/** The dimension of the unit cube the space is encoded in. */
size_t hml__space_dim(const hml__space *s);

/** The number of parameters, and the name of parameter i (borrowed). */
size_t hml__space_count(const hml__space *s);
const char *hml__space_name(const hml__space *s, size_t i);

/**
 * Snap u (dim coordinates, each clamped into [0,1]) in place to the encoding
 * of the sample it decodes to, so that encode(decode(u)) == u. Never fails.
 */
void hml__space_project(const hml__space *s, double *u);

/**
 * The sample u decodes to, as a new JSON object (yours: json_decref it).
 * Errors: HML_ENOMEM.
 */
int hml__space_decode(json_t **out, const hml__space *s, const double *u);

/**
 * Encode a sample into u (dim coordinates). The sample must hold exactly the
 * parameters that are active for its own values, each of its type and in
 * range (an int given as an integral real is accepted).
 * Errors: HML_EINVALID "sample: key 'lr' ...", e.g. "is missing",
 * "unknown key 'lrr'", "key 'lr': 0.5 is out of range [0.0001, 0.01]",
 * "key 'activation': 'elu' is not one of the values",
 * "key 'width_2' is set but inactive".
 */
int hml__space_encode(double *u, const hml__space *s, const json_t *sample);

#ifdef __cplusplus
}
#endif
#endif
