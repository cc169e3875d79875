#!/usr/bin/env bash
# Large photographs: 24, 48 and 100 MP images (baseline JPEG and 8-bit RGB PNG, made by
# bench/genbig), N of each, converted to JPEG at max side 256 with the default max_pixels and
# with max_pixels raised to 2^27, 1 and 2 workers. Reports, per run, whether it converted (or
# the reject reason), images/s, MB/s of input and peak RSS (from the run's report): the
# per-worker memory bound that README and docs/RECIPES.md state for max_pixels.
#   bench/bigphotos.sh [N]            results: bench/out/bigphotos.md
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-4}
data=bench/data/bigphotos$n
out=bench/out
mkdir -p "$out" bench/data
scripts/deps
go build -o "$out/convert" ./cmd/convert
[ -d "$data" ] || go run ./bench/genbig -out "$data" -n "$n"
res=$out/bigphotos.md
{
  echo "| input | max_pixels | workers | result | images/s | MB/s in | peak RSS MiB |"
  echo "|---|---|---|---|---|---|---|"
} >"$res"
for dir in "$data"/*; do
  name=$(basename "$dir")
  bytes=$(du -sb "$dir" | cut -f1)
  for mp in 0 134217728; do
    for w in 1 2; do
      o=$(mktemp -d)
      set +e
      "$out/convert" images "$dir" "$o/out.mldf" --mode jpeg --max-resolution 256 --max-pixels "$mp" \
        --workers "$w" --max-errors 100% --report "$o/report.json" >/dev/null 2>"$o/err"
      set -e
      python3 - "$o/report.json" "$bytes" "$name" "$mp" "$w" >>"$res" <<'PY'
import json, sys
rep, nbytes, name, mp, w = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
r = json.load(open(rep))
secs = r.get("elapsed_seconds") or 1e-9
ok, bad = r.get("num_samples", 0), r.get("num_rejected", 0)
result = "%d converted" % ok if not bad else "%d rejected" % bad
print("| %s | %s | %s | %s | %.1f | %.0f | %.0f |" % (name, mp if mp != "0" else "default", w, result,
      ok / secs, nbytes / secs / 1e6, r.get("peak_rss_bytes", 0) / 2**20))
PY
      rm -rf "$o"
    done
  done
done
cat "$res"
