#!/usr/bin/env bash
# Parquet benchmark. Images: the 2000-image benchmark set (bench/genimages, as in
# bench/images.sh) as a Hugging Face-style Parquet file (bench/genparquet: image struct +
# ClassLabel, snappy, row groups of 100) against the same images as a folder, in smart mode
# (max_resolution 512: every JPEG passes through, so the source dominates) and jpeg mode
# (max_resolution 256: decode, resize, encode). Text: the JSONL corpus of bench/text.sh
# (bench/genjsonl) as a Parquet file {id, text} (row groups of 10000) against the JSONL, to
# TEXT_RAW. The same Parquet files written with gzip and with zstd pages (the Hub's other
# codecs) run too. Each conversion runs with --workers 1 and 2; the table gives rows/s, MB/s of
# the input file, peak RSS (from the run's report JSON) and CPU seconds. Warm page cache.
# With "codecs" as the third argument only the gzip and zstd rows run; CONVERT=path runs that
# binary instead of building one (to compare two builds on the same files).
#   bench/parquet.sh [IMAGES] [TEXT_MB] [codecs]     results: bench/out/parquet.md
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-2000}
mb=${2:-200}
only=${3:-}
images=$PWD/bench/data/images$n
corpus=$PWD/bench/data/corpus-${mb}mb.jsonl
out=bench/out
mkdir -p "$out" bench/data
for tool in go jq bc; do
  command -v "$tool" >/dev/null || { echo "parquet.sh: $tool is required" >&2; exit 1; }
done
bin=${CONVERT:-$out/convert}
[ -n "${CONVERT:-}" ] || go build -o "$bin" ./cmd/convert
[ -d "$images" ] || go run ./bench/genimages -out "$images" -n "$n"
[ -f "$images.parquet" ] || go run ./bench/genparquet -images "$images" -out "$images.parquet"
if [ ! -f "$corpus" ]; then
  go run ./bench/genjsonl -out "$corpus.tmp" -mb "$mb"
  mv "$corpus.tmp" "$corpus"
fi
[ -f "$corpus.parquet" ] || go run ./bench/genparquet -jsonl "$corpus" -out "$corpus.parquet"
for codec in gzip zstd; do
  [ -f "$images.$codec.parquet" ] || go run ./bench/genparquet -images "$images" -codec "$codec" -out "$images.$codec.parquet"
  [ -f "$corpus.$codec.parquet" ] || go run ./bench/genparquet -jsonl "$corpus" -codec "$codec" -out "$corpus.$codec.parquet"
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
timed() {
  if [ -x /usr/bin/time ]; then /usr/bin/time -f '%U %S' -o "$tmp/cpu" "$@"; else echo "- -" >"$tmp/cpu"; "$@"; fi
}
cpu() { awk 'NF == 2 { if ($1 == "-") print "-"; else printf "%.2f", $1 + $2 }' "$tmp/cpu"; }
size() { if [ -d "$1" ]; then du -sb "$1" | cut -f1; else stat -c %s "$1"; fi; }

table="$out/parquet.md"
{
  printf "Images: %s (%s MB) and %s (%s MB). Text: %s (%s MB) and %s (%s MB). Load average at start: %s.\n\n" \
    "$images" "$(($(size "$images") / 1000000))" "$images.parquet" "$(($(size "$images.parquet") / 1000000))" \
    "$corpus" "$(($(size "$corpus") / 1000000))" "$corpus.parquet" "$(($(size "$corpus.parquet") / 1000000))" "$(cut -d' ' -f1-3 /proc/loadavg)"
  echo "| input | conversion | workers | rows/s | MB/s of input file | peak RSS MiB | seconds | CPU s |"
  echo "|---|---|---|---|---|---|---|---|"
} >"$table"

run() { # label input-size recipe-source workers fields...
  local label=$1 bytes=$2 src=$3 w=$4
  shift 4
  local o="$tmp/bench.mldf" r="$tmp/recipe.yaml"
  {
    printf 'source:\n%s\nfields:\n' "$src"
    for l in "$@"; do printf '  %s\n' "$l"; done
    printf 'output: %s\non_error: fail\n' "$o"
  } >"$r"
  cat "$r" >"$tmp/log"
  timed "$bin" run "$r" --workers "$w" --report "$o.json" --rejects "$o.rejects" >>"$tmp/log" 2>&1 ||
    { cat "$tmp/log" >&2; echo "parquet.sh: convert failed: $label workers $w" >&2; exit 1; }
  jq -r --arg l "$label" --arg w "$w" --argjson b "$bytes" --arg c "$(cpu)" \
    '"| \($l) | \($w) | \(.samples_per_second|floor) | \($b / 1000000 / .elapsed_seconds * 10 | floor / 10) | \(.peak_rss_bytes/1048576|floor) | \(.elapsed_seconds*100|floor/100) | \($c) |"' \
    "$o.json" >>"$table"
  rm -f "$o" "$o.json" "$o.rejects" "$o.classes.json"
}
folder=$(printf '  type: images\n  path: %s' "$images")
pq=$(printf '  type: parquet\n  inputs: [%s]' "$images.parquet")
jsonl=$(printf '  type: jsonl\n  inputs: [%s]' "$corpus")
pqt=$(printf '  type: parquet\n  inputs: [%s]' "$corpus.parquet")
for codec in gzip zstd; do
  for w in 1 2; do
    run "parquet $codec | images smart 512" "$(size "$images.$codec.parquet")" "$(printf '  type: parquet\n  inputs: [%s]' "$images.$codec.parquet")" "$w" \
      "- {name: image, type: image, mode: smart, max_resolution: 512}" "- {name: label, type: int}"
    run "Parquet $codec | text → TEXT_RAW" "$(size "$corpus.$codec.parquet")" "$(printf '  type: parquet\n  inputs: [%s]' "$corpus.$codec.parquet")" "$w" \
      "- {name: text, type: text}" "- {name: id, type: int}"
  done
done
[ "$only" = codecs ] && { cat "$table"; exit 0; }
for mode in "smart 512" "jpeg 256"; do
  set -- $mode
  for w in 1 2; do
    run "folder | images $1 $2" "$(size "$images")" "$folder" "$w" "- {name: image, type: image, mode: $1, max_resolution: $2}" "- {name: label, type: int}"
    run "parquet | images $1 $2" "$(size "$images.parquet")" "$pq" "$w" "- {name: image, type: image, mode: $1, max_resolution: $2}" "- {name: label, type: int}"
  done
done
for w in 1 2; do
  run "JSONL | text → TEXT_RAW" "$(size "$corpus")" "$jsonl" "$w" "- {name: text, type: text}" "- {name: id, type: int}"
  run "Parquet | text → TEXT_RAW" "$(size "$corpus.parquet")" "$pqt" "$w" "- {name: text, type: text}" "- {name: id, type: int}"
done
printf "\nLoad average at end: %s.\n\n" "$(cut -d' ' -f1-3 /proc/loadavg)" >>"$table"
echo "The source alone (go test ./sources/parquet -bench .):" >>"$table"
go test ./sources/parquet -run '^$' -bench . -benchtime 5x 2>&1 | grep -E '^Benchmark' | sed 's/^/    /' >>"$table"
cat "$table"
