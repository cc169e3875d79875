#!/usr/bin/env bash
# SCDL benchmark: a generated .h5ad of CELLS cells x 20,000 genes at 5% density
# (bench/gen_h5ad.py: CSR float32, uncompressed) converted to an SCDL archive with convert
# (format scdl), against reading the same matrix in row blocks with h5py (bench/h5py_read.py).
# BioNeMo's own converter cannot run here (no bionemo-scdl: PyPI is unreachable), so h5py's
# read is the floor any Python converter pays. Reports cells/s, MB/s of input, peak RSS.
#   bench/scdl.sh [CELLS...]     default: 100000 1000000; results: bench/out/scdl.md
# 1M cells is 1e9 stored values: an 8 GB input and a 6 GB archive (check df -h first).
set -euo pipefail
cd "$(dirname "$0")/.."
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(100000 1000000)
genes=${GENES:-20000}
density=${DENSITY:-0.05}
workers=${WORKERS:-2}
data=${BENCH_DATA:-bench/data}
out=bench/out
mkdir -p "$out" "$data"
py=/usr/bin/python3
$py -c 'import h5py' || { echo "scdl.sh: python3-h5py is required (scripts/deps test)" >&2; exit 1; }
go build -o "$out/convert" ./cmd/convert
table="$out/scdl.md"
{
  echo "SCDL conversion: ${genes} genes, density ${density}, workers ${workers}; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)."
  echo
  echo "| cells | stored values | input MB | tool | seconds | cells/s | MB/s in | peak RSS MiB | output MB |"
  echo "|---:|---:|---:|---|---:|---:|---:|---:|---:|"
} >"$table"
for cells in "${counts[@]}"; do
  in="$data/cells_${cells}_${genes}.h5ad"
  [ -f "$in" ] || { $py bench/gen_h5ad.py "$in.tmp" "$cells" "$genes" "$density" && mv "$in.tmp" "$in"; }
  bytes=$(stat -c %s "$in")
  mb=$(echo "$bytes / 1000000" | bc -l)
  cat "$in" >/dev/null # the same warm page cache for both tools
  arch="$data/cells_${cells}.scdl"
  rec="$data/cells_${cells}.yaml"
  printf 'source: {type: h5ad, inputs: [%s]}\nformat: scdl\noutput: %s\nworkers: %s\nlog_format: json\n' "$in" "$arch" "$workers" >"$rec"
  /usr/bin/time -f '%e %M' -o "$data/time" "$out/convert" run "$rec" >/dev/null 2>"$data/log"
  read -r secs rss <"$data/time"
  nnz=$(awk -v c="$cells" -v g="$genes" -v d="$density" 'BEGIN { printf "%d", c * int(g * d) }')
  outmb=$(du -sm "$arch" | cut -f1)
  "$out/convert" verify "$arch" >/dev/null
  printf '| %d | %d | %.0f | convert (scdl) | %.1f | %.0f | %.0f | %.0f | %d |\n' "$cells" "$nnz" "$mb" "$secs" \
    "$(echo "$cells / $secs" | bc -l)" "$(echo "$mb / $secs" | bc -l)" "$(echo "$rss / 1024" | bc -l)" "$outmb" >>"$table"
  /usr/bin/time -f '%e %M' -o "$data/time" $py bench/h5py_read.py "$in" >/dev/null
  read -r secs rss <"$data/time"
  printf '| %d | %d | %.0f | h5py read only | %.1f | %.0f | %.0f | %.0f | - |\n' "$cells" "$nnz" "$mb" "$secs" \
    "$(echo "$cells / $secs" | bc -l)" "$(echo "$mb / $secs" | bc -l)" "$(echo "$rss / 1024" | bc -l)" >>"$table"
  rm -rf "$arch" "$arch.report.json" "$arch.rejects.jsonl"
done
cat "$table"
