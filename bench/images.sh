#!/usr/bin/env bash
# Image benchmark (issue 2): a deterministic ImageFolder of 2000 photo-like 500x375 JPEGs,
# converted with --workers 1 and 2 in jpeg mode (max_resolution 256, quality 90) and smart mode
# (max_resolution 512: every image passes through untouched), with TurboJPEG (cgo) and the
# pure-Go build. Reports images/s, MB/s of input and peak RSS (from each run's report JSON),
# beside the time to just read the files. Warm page cache: the files are read once first.
#   bench/images.sh [N]        results: bench/out/images.md
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-2000}
data=bench/data/images$n
out=bench/out
mkdir -p "$out" bench/data
scripts/deps
go build -o "$out/convert" ./cmd/convert
CGO_ENABLED=0 go build -o "$out/convert-purego" ./cmd/convert
[ -d "$data" ] || go run ./bench/genimages -out "$data" -n "$n"

bytes=$(du -sb "$data" | cut -f1)
cat $(find "$data" -type f) >/dev/null   # warm the page cache
t0=$(date +%s.%N); cat $(find "$data" -type f) >/dev/null; t1=$(date +%s.%N)
read_s=$(echo "$t1 - $t0" | bc -l)

table="$out/images.md"
{
  echo "| build | mode | workers | images/s | MB/s in | peak RSS MiB | seconds |"
  echo "|---|---|---|---|---|---|---|"
  printf "| (cat the files) | - | 1 | %.0f | %.0f | - | %.2f |\n" "$(echo "$n / $read_s" | bc -l)" "$(echo "$bytes / 1000000 / $read_s" | bc -l)" "$read_s"
} > "$table"
run() { # build mode res workers [extra flags]
  local bin=$1 mode=$2 res=$3 w=$4; shift 4
  local o="$out/bench-$mode-$w.mldf" label=$bin
  [[ " $* " == *" --format beton "* ]] && label="$bin (.beton)"
  "$out/$bin" images "$data" "$o" --mode "$mode" --max-resolution "$res" --jpeg-quality 90 \
    --workers "$w" --report "$o.json" --rejects "$o.rejects" "$@" >/dev/null 2>&1
  jq -r --arg b "$label" --arg m "$mode $res" --arg w "$w" \
    '"| \($b) | \($m) | \($w) | \(.samples_per_second|floor) | \(.mb_in_per_second*10|floor/10) | \(.peak_rss_bytes/1048576|floor) | \(.elapsed_seconds*100|floor/100) |"' "$o.json" >> "$table"
  rm -f "$o" "$o.json" "$o.rejects" "$out/bench.beton"
}
for w in 1 2; do run convert jpeg 256 "$w"; done
for w in 1 2; do run convert smart 512 "$w"; done
for w in 1 2; do run convert-purego jpeg 256 "$w"; done
if [ -d beton ] || "$out/convert" run --help 2>&1 | grep -q beton; then
  for w in 1 2; do run convert jpeg 256 "$w" --format beton --output "$out/bench.beton"; done
fi
cat "$table"

echo
echo "Page writer alone vs a plain sequential write of the same bytes:"
go test ./pagewriter -run '^$' -bench 'PageWriter|SequentialWrite' -benchtime 3x 2>&1 | grep -E '^Benchmark|MB/s'
