#!/usr/bin/env bash
# Scale benchmark: memory must not grow with the number of samples, and time must
# grow linearly with it. Everything is generated here, in a temporary folder (bench/genscale),
# and deleted as soon as it has been used; nothing is committed.
#
#   JSONL   1 M, 10 M and 100 M tiny lines {"id", "text", "lang"} -> fields text + id
#   tar     1 M and 10 M samples of a WebDataset stream (a 32x32 JPEG thumbnail + .cls),
#           generated on the fly into a named pipe (never on disk)       [or KIND=wav clips]
#   folder  1 M and 4 M images of an ImageFolder (hard links to a few thumbnails)
#   merge   16 parts of 5 M samples (a sharded run of 80 M lines), then convert merge
#   verify, inspect and the Python reader's open on the largest JSONL output
#
# Each step runs under /usr/bin/time: wall seconds, CPU seconds (user + system: on a busy
# machine wall time varies with the other load, CPU time much less), peak RSS (the kernel's
# high-water mark of the whole process), samples/s and MB/s of input. The time ratios of
# 10x the samples must stay <= 10.5 (linear cost growth).
#
#   bench/scale.sh              the full run (needs ~15 GB of disk at a time, 30-60 minutes)
#   SCALE=small bench/scale.sh  a quick check: 0.1 M / 1 M / 10 M JSONL, 100 k / 1 M tar, ...
#   STEPS="jsonl tar" ...       only some steps (jsonl tar folder merge)
#   TMPDIR=/big/disk ...        where the data goes
# Results: bench/out/scale.md
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench/out
mkdir -p "$out"
for tool in go jq bc; do
  command -v "$tool" >/dev/null || { echo "scale.sh: $tool is required" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "scale.sh: /usr/bin/time is required (apt-get install time)" >&2; exit 1; }
go build -o "$out/convert" ./cmd/convert
go build -o "$out/genscale" ./bench/genscale
bin=$(realpath "$out/convert")
gen=$(realpath "$out/genscale")
steps=${STEPS:-jsonl tar folder merge}
kind=${KIND:-jpg}
if [ "${SCALE:-full}" = small ]; then
  jsonl_ns="100000 1000000 10000000"; tar_ns="100000 1000000"; folder_ns="100000 400000"; parts=4; per_part=250000
else
  jsonl_ns="1000000 10000000 100000000"; tar_ns="1000000 10000000"; folder_ns="1000000 4000000"; parts=16; per_part=5000000
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/scale.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
table="$out/scale.md"
{
  echo "Scale benchmark, $(date -u +%Y-%m-%d), $(nproc) cores, load average at start $(cut -d' ' -f1-3 /proc/loadavg)."
  echo
  echo "| step | samples | wall s | CPU s | peak RSS MiB | samples/s | MB/s in | input MB |"
  echo "|---|---|---|---|---|---|---|---|"
} >"$table"
ratios=()

# measure LABEL N BYTES CMD...: runs CMD under /usr/bin/time and appends a row to the table.
# BYTES is the input size, or @REPORT.json to read input_bytes from the run's report afterwards.
measure() {
  local label=$1 n=$2 bytes=$3
  shift 3
  if ! /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$@" >"$tmp/log" 2>&1; then
    cat "$tmp/log" >&2
    echo "scale.sh: failed: $*" >&2
    exit 1
  fi
  if [[ $bytes == @* ]]; then bytes=$(jq .input_bytes "${bytes#@}"); fi
  read -r wall user sys rss <"$tmp/time"
  local cpu
  cpu=$(echo "$user + $sys" | bc -l)
  printf "| %s | %d | %.1f | %.1f | %d | %.0f | %.1f | %.0f |\n" "$label" "$n" "$wall" "$cpu" $((rss / 1024)) \
    "$(echo "$n / $wall" | bc -l)" "$(echo "$bytes / 1000000 / $wall" | bc -l)" "$(echo "$bytes / 1000000" | bc -l)" | tee -a "$table"
  last_wall=$wall last_cpu=$cpu
}

# linear LABEL: records the ratios of consecutive sizes of a step (wall and CPU).
linear() {
  local label=$1 prev_n=$2 prev_wall=$3 prev_cpu=$4 n=$5 wall=$6 cpu=$7
  ratios+=("$(printf "| %s | %d -> %d | %.2f | %.2f | %.2f |" "$label" "$prev_n" "$n" \
    "$(echo "$n / $prev_n" | bc -l)" "$(echo "$wall / $prev_wall" | bc -l)" "$(echo "$cpu / $prev_cpu" | bc -l)")")
}

recipe_jsonl() { # INPUTS OUTPUT
  printf 'source:\n  type: jsonl\n  inputs: [%s]\nfields:\n  - {name: text, type: text}\n  - {name: id, type: int}\noutput: %s\n' "$1" "$2"
}

if [[ " $steps " == *" jsonl "* ]]; then
  pn=0
  for n in $jsonl_ns; do
    in="$tmp/lines.jsonl" o="$tmp/lines.mldf"
    "$gen" jsonl -n "$n" -out "$in"
    bytes=$(stat -c %s "$in")
    recipe_jsonl "$in" "$o" >"$tmp/r.yaml"
    measure "jsonl -> mldf (text + int), 2 workers" "$n" "$bytes" "$bin" run "$tmp/r.yaml" --workers 2
    [ "$pn" -gt 0 ] && linear "jsonl -> mldf" "$pn" "$pw" "$pc" "$n" "$last_wall" "$last_cpu"
    pn=$n pw=$last_wall pc=$last_cpu
    rm -f "$in"
    size=$(stat -c %s "$o")
    measure "verify" "$n" "$size" "$bin" verify "$o"
    measure "inspect" "$n" "$size" "$bin" inspect "$o"
    measure "python: mldf.open, len, r[0], r[-1], column" "$n" "$size" env PYTHONPATH=python /usr/bin/python3 -c \
      "import sys, mldf; r = mldf.open(sys.argv[1]); n = len(r); r[0]; r[n - 1]; c = r.column('id'); assert c.shape == (n,)" "$o"
    rm -f "$o" "$o".*
  done
fi

if [[ " $steps " == *" tar "* ]]; then
  pn=0
  field="{name: image, type: image, from: jpg, mode: smart}"
  [ "$kind" = wav ] && field="{name: audio, type: audio, from: wav}"
  for n in $tar_ns; do
    fifo="$tmp/stream.tar" o="$tmp/tar.mldf"
    mkfifo "$fifo"
    printf 'source: {type: tar, inputs: [%s]}\nfields:\n  - %s\n  - {name: label, type: int, from: cls}\noutput: %s\n' "$fifo" "$field" "$o" >"$tmp/r.yaml"
    "$gen" tar -n "$n" -kind "$kind" >"$fifo" &
    measure "tar stream ($kind) -> mldf, 2 workers" "$n" "@$o.report.json" "$bin" run "$tmp/r.yaml" --workers 2
    wait
    [ "$pn" -gt 0 ] && linear "tar stream -> mldf" "$pn" "$pw" "$pc" "$n" "$last_wall" "$last_cpu"
    pn=$n pw=$last_wall pc=$last_cpu
    rm -f "$fifo" "$o" "$o".*
  done
fi

if [[ " $steps " == *" folder "* ]]; then
  pn=0
  for n in $folder_ns; do
    d="$tmp/folder" o="$tmp/folder.mldf"
    "$gen" folder -n "$n" -out "$d"
    bytes=$(( n * $(stat -c %s "$d"/.src/t00000.jpg) ))
    measure "image folder -> mldf (smart), 2 workers" "$n" "$bytes" "$bin" images "$d" "$o" --mode smart --workers 2
    [ "$pn" -gt 0 ] && linear "image folder -> mldf" "$pn" "$pw" "$pc" "$n" "$last_wall" "$last_cpu"
    pn=$n pw=$last_wall pc=$last_cpu
    rm -rf "$d" "$o" "$o".*
  done
fi

if [[ " $steps " == *" merge "* ]]; then
  n=$((parts * per_part))
  "$gen" jsonl -n "$n" -files "$parts" -out "$tmp/part"
  bytes=$(cat "$tmp"/part-*.jsonl | wc -c)
  o="$tmp/merged.mldf"
  recipe_jsonl "$tmp/part-*.jsonl" "$o" >"$tmp/r.yaml"
  start=$(date +%s.%N)
  for i in $(seq 0 $((parts - 1))); do
    "$bin" run "$tmp/r.yaml" --shard "$i" --shards "$parts" --workers 2 >"$tmp/log" 2>&1 || { cat "$tmp/log" >&2; exit 1; }
  done
  echo "sharded run: $parts tasks of $per_part samples in $(echo "$(date +%s.%N) - $start" | bc -l | cut -c1-6) s" >&2
  rm -f "$tmp"/part-*.jsonl
  size=$(du -cb "$tmp"/merged.part-*.mldf | tail -1 | cut -f1)
  measure "merge $parts parts of $per_part" "$n" "$size" "$bin" merge "$o"
  rm -f "$tmp"/merged.part-*
  measure "verify (merged)" "$n" "$(stat -c %s "$o")" "$bin" verify "$o"
  rm -f "$o" "$o".*
fi

{
  echo
  echo "Cost growth (10x the samples must cost <= 10.5x the time):"
  echo
  echo "| step | samples | samples ratio | wall-time ratio | CPU-time ratio |"
  echo "|---|---|---|---|---|"
  for r in "${ratios[@]}"; do echo "$r"; done
  echo
  echo "Load average at end: $(cut -d' ' -f1-3 /proc/loadavg)."
} >>"$table"
cat "$table"
