/*
 * lib/store/checked.h - records read with their files checked (internal).
 *
 * What a command reads back from the store before it uses a record's file:
 * the file exists and still has the SHA-256 recorded when it was
 * registered, and a model still fits the workflow and region it was
 * trained for. The messages name the record and the file, for the user.
 */
#ifndef HML_LIB_CHECKED_H
#define HML_LIB_CHECKED_H

#include <stddef.h>

#include <jansson.h>

#include "run/workflow.h"
#include "store/records.h"
#include "store/store.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The file `role` of record `rec` ("data" of a data set, "model" of a
 * model), checked: it exists and still has the SHA-256 recorded in the
 * record's provenance. `kind` names the record in messages ("data set",
 * "model"), `since` the event that recorded the hash ("collected",
 * "registered"). *abs_path (malloc'ed, yours; absolute when the file
 * exists) is the file; NULL after a failure.
 * Errors: HML_EINVALID "model 'm1' has no model file in the manifest";
 * HML_ENOTFOUND "data file 'P' of data set 'd1' is missing";
 * HML_EINVALID "model file 'P' changed since it was registered (SHA-256
 * differs)"; HML_EINVALID "'models/m1.pt' in experiment 'EXP' is a symbolic
 * link; hml does not read through links" (any component inside the
 * experiment, hml__beneath_open) or "... is not a regular file";
 * HML_EIO, HML_ENOMEM.
 * The parts of a file are checked with it, the same way: the roles the rank
 * rule (core/rankfile.h) makes of `role` ("data.r0003" of "data"), which
 * hml collect gives the ranks' files behind an MPI data set's view.
 */
int hml__checked_file(const hml__store *s, const json_t *rec, const char *kind,
                      const char *role, const char *since, char **abs_path);

/**
 * The data files of data sets ids[0 .. n), each checked by
 * hml__checked_file(). *paths (n entries, each and the array malloc'ed) is
 * yours, also after a failure (entries not reached are NULL).
 */
int hml__checked_dataset_files(const hml__store *s, const char *const *ids, size_t n,
                               char ***paths);

/**
 * A model record by id, checked: its file exists and still has the
 * SHA-256 recorded when it was registered. *model borrows from the store;
 * *abs_path (malloc'ed, yours) is the model file.
 * Errors: HML_ENOTFOUND "no model 'm9' in experiment 'DIR'", HML_EINVALID
 * "model file 'P' changed since it was registered (SHA-256 differs)".
 */
int hml__checked_model(const hml__store *s, const char *id, hml__model_view *model,
                       char **abs_path);

/**
 * The workflow a model was trained for (through its data sets' recorded
 * workflow.json, else its name when that file is not found; an invalid
 * one is an error), checked: the workflow has the model's region, and the
 * region's rows in the newest data set of that workflow
 * holding rows of the region (lib/store/data_pick.h) have the model's
 * input/output shapes. *out is yours (hml__workflow_free()).
 * Errors: HML_EINVALID "model 'm1' names no region", "model 'm1' names no
 * workflow", "model 'm1' is for region 'R', which workflow 'W' does not
 * have"; HML_ESHAPE "model 'm1' has input rows [5] but region 'R' of data
 * set 'd2' has [6]"; those of hml__workflow_load().
 */
int hml__checked_model_workflow(const hml__store *s, const hml__model_view *model,
                                hml__workflow **out);

#ifdef __cplusplus
}
#endif
#endif
