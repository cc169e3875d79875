#!/usr/bin/env bash
# Writer speed against every peer, side by side in one run. Two jobs:
#  - images: the bench/images.sh set (N photo-like 500x375 JPEGs, bench/genimages), every image
#    resized to max side 256 and stored as JPEG quality 90, plus the int label (the class
#    folder's index). convert writes MLDF, .beton and MDS (`convert images --mode jpeg
#    --max-resolution 256 --jpeg-quality 90 --workers 2`); the peers: FFCV's DatasetWriter
#    (bench/ffcv_write.py, 2 workers), MosaicML's MDSWriter (jpeg column, a 2-process Pillow
#    pool), LitData's optimize (num_workers 2), WebDataset's ShardWriter (a 2-process Pillow
#    pool), Hugging Face datasets (map num_proc 2, then to_parquet): bench/peers_write.py says
#    how each is written.
#  - text: the generated JSONL of bench/text.sh (MB megabytes, bench/genjsonl), its "text"
#    value: convert to TEXT_RAW (--workers 2), MDSWriter (str column), LitData (2 workers),
#    datasets (load_dataset json num_proc 2, to_parquet).
# Each tool runs RUNS times (default 3) in turn, same disk (bench/out), warm page cache.
# Reported per tool: images/s or MB/s of input (median), CPU seconds (user+sys of the process
# and its workers; the peers' from after their imports, convert's whole process; median), peak
# RSS (the largest process; max over runs), output size, and the throughput over the fastest
# peer's. The load average before each run is printed: the machine is shared.
# Needs the test venv (scripts/deps test) for the peers.
#   bench/peers.sh [N] [MB] [RUNS]     results: bench/out/peers.md
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-2000}
mb=${2:-200}
runs=${3:-3}
imgs=bench/data/images$n
jsonl=bench/data/corpus-${mb}mb.jsonl
out=bench/out
mkdir -p "$out" bench/data
for tool in go jq bc; do
  command -v "$tool" >/dev/null || { echo "peers.sh: $tool is required" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "peers.sh: /usr/bin/time (GNU time) is required" >&2; exit 1; }
venvpy=${MLDF_VENV:-$PWD/.venv}/bin/python
if ! (cd /tmp && "$venvpy" -W ignore -c 'import ffcv.writer, streaming, litdata, webdataset, datasets') >/dev/null 2>&1; then
  echo "peers.sh: the test venv ($venvpy) lacks the peers: run scripts/deps test (or set MLDF_VENV)" >&2
  exit 1
fi
go build -o "$out/convert" ./cmd/convert
[ -d "$imgs" ] || go run ./bench/genimages -out "$imgs" -n "$n"
if [ ! -f "$jsonl" ]; then
  go run ./bench/genjsonl -out "$jsonl.tmp" -mb "$mb"
  mv "$jsonl.tmp" "$jsonl"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mapfile -t files < <(find "$imgs" -type f | sort)
cat "${files[@]}" "$jsonl" >/dev/null # warm the page cache
jbytes=$(stat -c %s "$jsonl")
jlines=$(wc -l <"$jsonl")

declare -A thr cpu rss size
order=()
loads=()
# add KEY THROUGHPUT CPU_S RSS_MIB BYTES
add() {
  [[ " ${order[*]} " == *" $1 "* ]] || order+=("$1")
  thr[$1]+=" $2"
  cpu[$1]+=" $3"
  rss[$1]+=" $4"
  size[$1]=$5
}
# conv KEY PER(images|mb) CMD...: convert, timed with GNU time (wall, CPU, largest RSS).
conv() {
  local key=$1 per=$2 dest=$3
  shift 3
  rm -rf "$dest"
  /usr/bin/time -f '%e %U %S %M' -o "$tmp/t" "$@" >"$tmp/log" 2>&1 || { cat "$tmp/log" >&2; echo "peers.sh: $key failed" >&2; exit 1; }
  local w u s m
  read -r w u s m <"$tmp/t"
  local t
  if [ "$per" = images ]; then t=$(echo "$n / $w" | bc -l); else t=$(echo "$jbytes / 1000000 / $w" | bc -l); fi
  add "$key" "$(printf '%.1f' "$t")" "$(echo "$u + $s" | bc -l | xargs printf '%.2f')" "$((m / 1024))" "$(du -sb "$dest" | cut -f1)"
  rm -rf "$dest" "$dest".*
}
# peer KEY PER JOB: bench/peers_write.py (or ffcv_write.py for ffcv), its own JSON figures.
peer() {
  local key=$1 per=$2 job=$3 dest="$out/peers-$3"
  rm -rf "$dest"
  if [ "$job" = ffcv ]; then
    "$venvpy" bench/ffcv_write.py "$imgs" "$dest" --workers 2 >"$tmp/j" 2>"$tmp/log" || { tail -20 "$tmp/log" >&2; exit 1; }
    tail -1 "$tmp/j" | jq -c '{seconds, cpu_s, peak_rss_mib: ([.peak_rss_mib, .peak_rss_worker_mib]|max), bytes}' >"$tmp/k"
    mv "$tmp/k" "$tmp/j"
  else
    local in=$imgs
    [ "$per" = mb ] && in=$jsonl
    "$venvpy" bench/peers_write.py "$job" "$in" "$dest" --workers 2 >"$tmp/k" 2>"$tmp/log" || { tail -20 "$tmp/log" >&2; exit 1; }
    tail -1 "$tmp/k" >"$tmp/j"
  fi
  local secs t
  secs=$(jq -r .seconds "$tmp/j")
  if [ "$per" = images ]; then t=$(echo "$n / $secs" | bc -l); else t=$(echo "$jbytes / 1000000 / $secs" | bc -l); fi
  add "$key" "$(printf '%.1f' "$t")" "$(jq -r '.cpu_s' "$tmp/j" | xargs printf '%.2f')" "$(jq -r '.peak_rss_mib|floor' "$tmp/j")" "$(jq -r .bytes "$tmp/j")"
  rm -rf "$dest" "$dest".*
}
recipe="$tmp/text.yaml"
printf 'source:\n  type: jsonl\n  inputs: [%s]\nfields:\n  - name: text\n    type: text\noutput: %s\non_error: fail\n' \
  "$PWD/$jsonl" "$PWD/$out/peers-text.mldf" >"$recipe"
ijob=(images "$imgs" --mode jpeg --max-resolution 256 --jpeg-quality 90 --workers 2)
for r in $(seq "$runs"); do
  loads+=("$(cut -d' ' -f1-3 /proc/loadavg)")
  conv "img convert MLDF" images "$out/peers-img.mldf" "$out/convert" "${ijob[@]}" "$out/peers-img.mldf"
  conv "img convert .beton" images "$out/peers-img.beton" "$out/convert" "${ijob[@]}" "$out/peers-img.beton" --format beton
  conv "img convert MDS" images "$out/peers-img-mds" "$out/convert" "${ijob[@]}" "$out/peers-img-mds" --format mds
  peer "img FFCV DatasetWriter" images ffcv
  peer "img MosaicML MDSWriter" images mds-images
  peer "img LitData optimize" images litdata-images
  peer "img WebDataset ShardWriter" images wds-images
  peer "img HF datasets to_parquet" images hf-images
  conv "text convert MLDF" mb "$out/peers-text.mldf" "$out/convert" run "$recipe" --workers 2
  peer "text MosaicML MDSWriter" mb mds-text
  peer "text LitData optimize" mb litdata-text
  peer "text HF datasets to_parquet" mb hf-text
done

med() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
maxof() { tr ' ' '\n' | grep -v '^$' | sort -g | tail -1; }
# The fastest peer of a job (img or text): the highest median throughput among non-convert tools.
best() {
  local k b=0 v
  for k in "${order[@]}"; do
    [[ $k == "$1 "* && $k != *convert* ]] || continue
    v=$(echo "${thr[$k]}" | med)
    if (($(echo "$v > $b" | bc -l))); then b=$v; fi
  done
  echo "$b"
}
table="$out/peers.md"
{
  echo "Machine: $(nproc) x $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo); $runs runs; load average (1, 5, 15 min) before each run: $(printf '%s; ' "${loads[@]}")"
  echo "Images: $imgs ($n JPEGs, $(du -sb "$imgs" | awk '{printf "%.1f MB", $1/1e6}')); text: $jsonl ($jlines lines, $(echo "$jbytes / 1000000" | bc -l | xargs printf '%.1f') MB)."
  echo
  echo "| job | tool (2 workers or processes) | throughput (median) | per run | CPU s (median) | peak RSS MiB (max) | output MB | over the fastest peer |"
  echo "|---|---|---|---|---|---|---|---|"
  for job in img text; do
    b=$(best "$job")
    unit="images/s"
    [ "$job" = text ] && unit="MB/s"
    for k in "${order[@]}"; do
      [[ $k == "$job "* ]] || continue
      v=$(echo "${thr[$k]}" | med)
      printf "| %s | %s | %s %s | %s | %s | %s | %.1f | %.2fx |\n" "$([ "$job" = img ] && echo "images, max 256, q90" || echo "JSONL text")" \
        "${k#* }" "$v" "$unit" "$(echo "${thr[$k]}" | xargs | sed 's/ / \/ /g')" "$(echo "${cpu[$k]}" | med)" \
        "$(echo "${rss[$k]}" | maxof)" "$(echo "${size[$k]} / 1000000" | bc -l)" "$(echo "$v / $b" | bc -l)"
    done
  done
} >"$table"
cat "$table"
