#!/usr/bin/env python3
"""No circle of object files (tests/arrows/check.sh, rule 5).

Reads the symbols of the project's own objects in a build tree (nm): an
object that uses a symbol another defines depends on it. A strongly
connected set of two or more objects is a circle: neither can be read,
tested or replaced without the other, and the layering no longer says
which comes first. Callbacks (a function pointer handed down) are the way
to call upwards.

usage: cycles.py BUILD_DIR
"""
import os
import subprocess
import sys

# The objects of these targets (their CMakeFiles/<target>.dir folders).
# Left out: the proxies, which define symbols over again for the program
# that links them, forwarding them to a plugin (hml_collect_proxy_obj for
# libhml; hml_train_proxy_obj, hml_deploy_proxy_obj and hml_opt_proxy_obj
# for the hml CLI), and the plugins, modules of their own. In: the
# implementations the plugins are built from, as the unit tests link them.
TARGETS = {
    "hml_core_base_obj", "hml_core_obj", "hml_core_h5_obj", "hml_loader",
    "hml_runtime_obj", "hml_collect_obj", "hml_sys", "hml_train_obj",
    "hml_dataset_obj", "hml_train_torch_obj", "hml_run", "hml_codegen_obj",
    "hml_deploy", "hml_export_obj", "hml_store", "hml_opt", "hml_bo_obj",
    "hml_search", "hml_cli",
}


def objects(build):
    for root, dirs, files in os.walk(build):
        parts = root.split(os.sep)
        target = next((p[:-4] for p in parts if p.endswith(".dir")), None)
        if target not in TARGETS:
            continue
        for f in files:
            if f.endswith(".o"):
                yield os.path.join(root, f)


def symbols(path):
    out = subprocess.run(["nm", "-P", path], capture_output=True, text=True,
                         check=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) < 2:
            continue
        name, kind = f[0], f[1]
        if kind == "U":
            used.add(name)
        elif kind in "TDBR" or kind in "VW":
            defined.add(name)
    return defined, used


def circles(graph):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in graph:
        if v not in index:
            visit(v)
    return out


def main():
    build = sys.argv[1]
    objs = sorted(objects(build))
    if not objs:
        print("FAIL: no objects of the project's targets under " + build, file=sys.stderr)
        return 1
    where, uses = {}, {}
    for o in objs:
        defined, used = symbols(o)
        uses[o] = used
        for s in defined:
            where.setdefault(s, set()).add(o)
    graph = {o: sorted({d for s in uses[o] for d in where.get(s, ()) if d != o}) for o in objs}
    found = circles(graph)
    name = lambda o: os.path.relpath(o, build)
    for comp in found:
        print("FAIL: a circle of objects: " + " <-> ".join(name(o) for o in comp),
              file=sys.stderr)
    if not found:
        print("ok: no circle among %d objects" % len(objs))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
