#!/usr/bin/env python3
"""bench/noblas.py EXP SUFFIX - rebuild every compiled model of experiment
EXP without OpenBLAS, as models/<cN>-SUFFIX.so: the flags of its "compiled"
record less the BLAS ones (-DHML_CMODEL_CBLAS, the library, its rpath).
bench/cmodel.sh and bench/cnn.sh time these beside the deployed objects to
show where the sgemm path pays."""
import json, subprocess, sys

exp, suffix = sys.argv[1], sys.argv[2]
for c in json.load(open(exp + "/manifest.json")).get("compiled", []):
    cc = c["compiler"]
    flags = [f for f in cc["flags"] if f != "-DHML_CMODEL_CBLAS" and not f.startswith("-Wl,-rpath")
             and f != cc.get("blas") and f != "-lm"]
    subprocess.run([cc["path"]] + flags + ["-o", f"{exp}/models/{c['id']}-{suffix}.so",
                    f"{exp}/{c['files']['source']}", "-lm"], check=True)
