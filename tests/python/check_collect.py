#!/usr/bin/env python3
"""Read a file written by the hml collector with h5py and check it.

usage: check_collect.py FILE LABEL IN_DTYPE IN_SHAPE OUT_DTYPE OUT_SHAPE CALLS

IN_SHAPE/OUT_SHAPE are the feature dims of one row ("4,3,5"; "-" for none),
CALLS the number of calls of each run ("7,4": run 0 made 7 calls, run 1 four).
The values follow tests/unit/collect.c: rows_of() and value(). Exits 1 with
a message on the first mismatch.
"""
import re
import sys

import h5py
import numpy as np

FIELDS = ["run", "call", "input_offset", "input_rows", "output_offset",
          "output_rows", "original_seconds", "ncalls"]


def rows_of(side, call):
    return 1 + call % 3 if side == 0 else 1 + (call + 1) % 2


def value(side, run, call, row, k):
    return (0.5 * side + 200000.0 * run + 1000.0 * (call % 4096)
            + 100.0 * row + k)


def fail(msg):
    print("check_collect: " + msg, file=sys.stderr)
    sys.exit(1)


def expect(cond, msg):
    if not cond:
        fail(msg)


def text(attr):
    return attr.decode("utf-8") if isinstance(attr, bytes) else attr


def main(argv):
    if len(argv) != 8:
        fail(__doc__.strip().splitlines()[2])
    path, label, in_dt, in_shape, out_dt, out_shape, calls = argv[1:]
    shapes = [tuple(int(x) for x in s.split(",")) if s != "-" else ()
              for s in (in_shape, out_shape)]
    dtypes = [np.dtype(in_dt), np.dtype(out_dt)]
    per_run = [int(x) for x in calls.split(",")]

    with h5py.File(path, "r") as f:
        expect(label in f, "no group %r" % label)
        g = f[label]
        a = g.attrs
        expect(int(a["runs"]) == len(per_run),
               "runs is %s, expected %d" % (a["runs"], len(per_run)))
        expect(text(a["input_dtype"]) == in_dt, "input_dtype %r" % a["input_dtype"])
        expect(text(a["output_dtype"]) == out_dt, "output_dtype %r" % a["output_dtype"])
        expect(re.fullmatch(r"\d+\.\d+\.\d+.*", text(a["hml_version"])),
               "hml_version %r" % a["hml_version"])
        expect(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", text(a["created"])),
               "created %r" % a["created"])
        for key in ("input_functor", "output_functor", "input_arrays",
                    "output_arrays", "input_domain", "output_domain"):
            expect(isinstance(text(a[key]), str), "attribute %s" % key)

        data = []
        for side, name in enumerate(("input", "output")):
            d = g[name]
            expect(d.dtype == dtypes[side], "%s dtype %s" % (name, d.dtype))
            expect(d.shape[1:] == shapes[side],
                   "%s shape %s, rows of %s expected" % (name, d.shape, shapes[side]))
            expect(d.chunks is not None and d.maxshape[0] is None,
                   "%s is not chunked and growing" % name)
            data.append(d[...].reshape(d.shape[0], -1).astype(np.float64))

        c = g["calls"]
        expect(list(c.dtype.names) == FIELDS, "calls fields %s" % (c.dtype.names,))
        recs = c[...]
        expect(len(recs) == sum(per_run),
               "%d calls, expected %d" % (len(recs), sum(per_run)))
        i = 0
        nxt = [0, 0]
        for run, n in enumerate(per_run):
            for call in range(n):
                r = recs[i]
                expect(r["run"] == run and r["call"] == call,
                       "record %d is run %d call %d" % (i, r["run"], r["call"]))
                expect(r["ncalls"] == 1, "record %d ncalls %d" % (i, r["ncalls"]))
                expect(r["original_seconds"] == run + 0.001 * call,
                       "record %d original_seconds %r" % (i, r["original_seconds"]))
                for side, (off, cnt) in enumerate(
                        (("input_offset", "input_rows"),
                         ("output_offset", "output_rows"))):
                    expect(r[off] == nxt[side] and r[cnt] == rows_of(side, call),
                           "record %d: %s %d, %s %d" % (i, off, r[off], cnt, r[cnt]))
                    block = data[side][r[off]:r[off] + r[cnt]]
                    nf = block.shape[1]
                    want = np.array([[value(side, run, call, row, k)
                                      for k in range(nf)]
                                     for row in range(r[cnt])])
                    expect(np.array_equal(block, want),
                           "record %d: wrong %s values" % (i, off[:-7]))
                    nxt[side] += r[cnt]
                i += 1
        expect(nxt[0] == data[0].shape[0] and nxt[1] == data[1].shape[0],
               "rows not covered by calls: %s vs %d, %d"
               % (nxt, data[0].shape[0], data[1].shape[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
