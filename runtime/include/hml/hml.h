/*
 * hml/hml.h - the whole public API of the hml runtime.
 *
 * Link with -lhml (pkg-config hml) or hml::hml (find_package(hml)).
 * See hml-runtime(3).
 */
#ifndef HML_HML_H
#define HML_HML_H

#include "hml/common.h"
#include "hml/error.h"
#include "hml/qoi.h"
#include "hml/region.h"
#include "hml/tensor.h"
#include "hml/version.h"

#endif
