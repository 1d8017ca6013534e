#!/bin/sh
# bench/compression.sh - what compressing a collection costs and saves, on
# binomial's real rows, one run of the application per compression
# (HML_COLLECT_COMPRESSION: none, deflate:1, deflate:4, deflate:9,
# shuffle+deflate:4, szip), the same options and seed each time:
#   MB/s written   the rows' raw bytes / the profile's write_s (the
#                  collector's time writing; HML_FLUSH_BYTES=1 flushes
#                  every call, so every write is inside a call and timed)
#   ratio          the rows' raw bytes / the file's bytes
# both also against none, measured in the same run of this script.
#
# usage: bench/compression.sh [BUILD_DIR] [OPTIONS]
set -eu

build=${1:-build}
zoptions=${2:-16384}
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bin="$build/workflows/binomial/binomial"

echo "compression of binomial's collected rows ($zoptions options, batch 1024, each call flushed):"
for z in none deflate:1 deflate:4 deflate:9 shuffle+deflate:4 szip; do
	rm -f "$tmp/z.h5" "$tmp/z.json"
	HML_MODE=collect HML_DB="$tmp/z.h5" HML_PROFILE="$tmp/z.json" HML_FLUSH_BYTES=1 \
		HML_COLLECT_COMPRESSION="$z" "$bin" --options "$zoptions" --batch 1024 >/dev/null
	echo "$z $(stat -c %s "$tmp/z.h5")" >> "$tmp/zsizes"
	cp "$tmp/z.json" "$tmp/z-$(echo "$z" | tr ':+' '__').json"
done
"$py" - "$tmp" <<'PY'
import json, sys
tmp = sys.argv[1]
rows = []
for line in open(tmp + "/zsizes"):
    z, size = line.split()
    p = json.load(open(tmp + "/z-" + z.replace(":", "_").replace("+", "_") + ".json"))["regions"][0]
    raw = p["rows_in"] * 5 * 8 + p["rows_out"] * 1 * 8
    rows.append((z, raw / p["write_s"] / 1e6, raw / int(size), p["write_s"]))
base = rows[0]
print(f"  {'compression':18} {'MB/s':>8} {'vs none':>8} {'ratio':>7} {'vs none':>8}")
for z, mbs, ratio, _ in rows:
    print(f"  {z:18} {mbs:8.1f} {mbs / base[1]:7.2f}x {ratio:7.2f} {ratio / base[2]:7.2f}x")
PY
