#!/usr/bin/env bash
# Image benchmark: a deterministic ImageFolder of N photo-like 500x375 JPEGs
# (bench/genimages), converted RUNS times with --workers 1 and 2 in jpeg mode (max_resolution
# 256, quality 90: the job FFCV's writer was measured on), in smart mode (max_resolution 512:
# every image passes through untouched), with TurboJPEG (cgo) and the pure-Go build, and to
# .beton. Each run also times its anchors on the same files: reading them (cat > /dev/null),
# a plain durable write of them (cat > file; sync file), and the machine's own scaling: two
# 1-worker conversions at once, each of half the files (hard links in bench/data), against
# which the 2-worker conversion's scaling is judged. Reports images/s per run, CPU
# milliseconds per image (user+sys of the process: on a shared machine the figure to compare),
# MB/s of input, peak RSS (from each run's report), the load average before each run, and the
# PSNR of the jpeg output against a full decode + area average (bench/imgpsnr.py; the output
# is the same bytes every run, so it is scored once). Warm page cache: the files are read once
# first. The 2-worker smart run is repeated with its output on tmpfs (TMPFS, default /dev/shm):
# how fast the converter is when the disk does not bound it.
#   bench/images.sh [N] [RUNS]        results: bench/out/images.md
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-2000}
runs=${2:-3}
data=bench/data/images$n
out=bench/out
mkdir -p "$out" bench/data
scripts/deps
go build -o "$out/convert" ./cmd/convert
CGO_ENABLED=0 go build -o "$out/convert-purego" ./cmd/convert
[ -d "$data" ] || go run ./bench/genimages -out "$data" -n "$n"

# FFCV 1.0's own DatasetWriter on the same jpeg job (2 workers, RGBImageField jpg max 256 q90,
# IntField label; bench/ffcv_write.py), run in each run beside convert when the test venv has
# FFCV (scripts/deps test); the ratio is printed per run.
venvpy=${MLDF_VENV:-$PWD/.venv}/bin/python
ffcv=0
if [ -x "$venvpy" ] && (cd /tmp && "$venvpy" -c 'import ffcv.writer') >/dev/null 2>&1; then ffcv=1; fi
# Each run times TurboJPEG 2.1 alone on these files (one thread, CPU µs per image) to YUV
# planes at 1/8 scale (the Huffman floor) and at 4/8 (BenchmarkFolderStages, the same library
# through cgo): what the decode costs on this machine today.

bytes=$(du -sb "$data" | cut -f1)
mapfile -t files < <(find "$data" -type f | sort)
# Two halves of the set (every other file of each class, hard links) for the pair anchor.
half=bench/data/images$n-half
if [ ! -d "${half}B" ]; then
  rm -rf "${half}A" "${half}B"
  i=0
  for f in "${files[@]}"; do
    h=A
    if [ $((i % 2)) = 1 ]; then h=B; fi
    c=$(basename "$(dirname "$f")")
    mkdir -p "$half$h/$c"
    ln "$f" "$half$h/$c/" 2>/dev/null || cp "$f" "$half$h/$c/"
    i=$((i + 1))
  done
fi
cat "${files[@]}" >/dev/null # warm the page cache
TIMEFORMAT='%R %U %S'

declare -A ips cpu mbs rss
loads=() tjf=() tjh=()
# tjstages: TurboJPEG's own decode at 1/8 and at 4/8 on these files, CPU µs per image.
tjstages() {
  local o
  o=$(MLDF_BENCH_IMAGES="$PWD/$data" go test ./encoders/imagefield -run '^$' -bench 'FolderStages/decode' \
    -benchtime "${n}x" 2>&1 || true)
  tjf+=("$(awk '/decode-yuv-1/ {for (i = 1; i < NF; i++) if ($(i+1) == "cpu-µs/img") print int($i)}' <<<"$o")")
  tjh+=("$(awk '/decode-yuv-scaled/ {for (i = 1; i < NF; i++) if ($(i+1) == "cpu-µs/img") print int($i)}' <<<"$o")")
}
# timed LABEL CMD...: runs CMD, keeps wall seconds and user+sys CPU seconds in tw, tc.
timed() {
  local t
  t=$({ time "$@" >/dev/null 2>&1; } 2>&1)
  read -r tw tu ts <<<"$t"
  tc=$(echo "$tu + $ts" | bc -l)
}
# conv KEY BIN MODE RES WORKERS [flags]: one conversion; its figures come from its report.
conv() {
  local key=$1 bin=$2 mode=$3 res=$4 w=$5
  shift 5
  local o="$out/bench-$mode-$w.mldf"
  timed "$out/$bin" images "$data" "$o" --mode "$mode" --max-resolution "$res" --jpeg-quality 90 \
    --workers "$w" --report "$o.json" --rejects "$o.rejects" "$@"
  ips[$key]+=" $(jq -r '.samples_per_second|floor' "$o.json")"
  mbs[$key]+=" $(jq -r '.input_mb_per_second*10|floor/10' "$o.json")"
  rss[$key]+=" $(jq -r '.peak_rss_bytes/1048576|floor' "$o.json")"
  cpu[$key]+=" $(echo "$tc * 1000 / $n" | bc -l | xargs printf '%.2f')"
  if [ "$key" = "jpeg-2" ] && [ ! -f "$out/psnr.txt" ]; then
    if /usr/bin/python3 -c 'import numpy, PIL' 2>/dev/null; then
      /usr/bin/python3 bench/imgpsnr.py "$data" "$o" >"$out/psnr.txt"
    else
      echo "(python3 with numpy and Pillow not found: PSNR not measured)" >"$out/psnr.txt"
    fi
  fi
  rm -f "$o" "$o.json" "$o.rejects" "$out/bench.beton" "$out/bench.beton.json" "$out/bench.beton.rejects"
}
anchor() { # KEY SECONDS
  ips[$1]+=" $(echo "$n / $2" | bc -l | xargs printf '%.0f')"
  mbs[$1]+=" $(echo "$bytes / 1000000 / $2" | bc -l | xargs printf '%.1f')"
}

rm -f "$out/psnr.txt"
# TMPFS=/dev/shm (the default when it exists) adds a 2-worker smart run whose output goes to
# that memory file system; TMPFS= turns it off.
shm=${TMPFS-/dev/shm}
[ -n "$shm" ] && [ -d "$shm" ] && [ -w "$shm" ] || shm=""
beton=0
help=$("$out/convert" images --help 2>&1 || true) # not piped into grep -q: pipefail and SIGPIPE
if [[ $help == *-format* ]]; then beton=1; fi
for r in $(seq "$runs"); do
  loads+=("$(cut -d' ' -f1-3 /proc/loadavg)")
  tjstages
  timed cat "${files[@]}"
  anchor cat "$tw"
  plain="$out/bench-plain.bin"
  timed sh -c 'f=$1; shift; cat "$@" >"$f" && sync "$f"' sh "$plain" "${files[@]}"
  anchor plain "$tw"
  rm -f "$plain"
  for w in 1 2; do conv "jpeg-$w" convert jpeg 256 "$w"; done
  # The pair: two 1-worker processes at once on the halves; CPU is both processes'.
  timed sh -c 'for h in A B; do "$1" images "$2$h" "$3$h.mldf" --mode jpeg --max-resolution 256 \
    --jpeg-quality 90 --workers 1 --report "$3$h.json" --rejects "$3$h.rejects" & done; wait' \
    sh "$out/convert" "$half" "$out/bench-pair"
  anchor pair "$tw"
  cpu[pair]+=" $(echo "$tc * 1000 / $n" | bc -l | xargs printf '%.2f')"
  rss[pair]+=" $(jq -s 'map(.peak_rss_bytes)|add/1048576|floor' "$out"/bench-pair?.json)"
  rm -f "$out"/bench-pair?.*
  for w in 1 2; do conv "smart-$w" convert smart 512 "$w"; done
  if [ -n "$shm" ]; then
    # The same smart run with its output on tmpfs: the converter without the disk.
    conv smart-shm convert smart 512 2 --output "$shm/bench-smart.mldf"
    rm -f "$shm"/bench-smart.*
  fi
  for w in 1 2; do conv "purego-$w" convert-purego jpeg 256 "$w"; done
  if [ "$beton" = 1 ]; then
    for w in 1 2; do conv "beton-$w" convert jpeg 256 "$w" --format beton --output "$out/bench.beton"; done
  fi
  if [ "$ffcv" = 1 ]; then
    # FFCV's writer: its own figures (wall time of the writer, CPU of it and its workers).
    "$venvpy" bench/ffcv_write.py "$data" "$out/bench-ffcv.beton" --workers 2 >"$out/bench-ffcv.json" 2>/dev/null
    ips[ffcv-2]+=" $(jq -r '.images_per_s|floor' "$out/bench-ffcv.json")"
    mbs[ffcv-2]+=" $(jq -r ".images_per_s * $bytes / $n / 1000000 * 10 | floor / 10" "$out/bench-ffcv.json")"
    rss[ffcv-2]+=" $(jq -r '[.peak_rss_mib, .peak_rss_worker_mib]|max|floor' "$out/bench-ffcv.json")"
    cpu[ffcv-2]+=" $(jq -r '.cpu_ms_per_image' "$out/bench-ffcv.json" | xargs printf '%.2f')"
    ffcvsize=$(jq -r .bytes "$out/bench-ffcv.json")
    rm -f "$out/bench-ffcv.beton" "$out/bench-ffcv.json"
  fi
done

# One traced jpeg run with 2 workers after the timed ones (not in the table): where its wall time
# went (bench/tracebusy.py: the workers' busy share, the time before the first sample and after
# the last).
"$out/convert" images "$data" "$out/bench-trace.mldf" --mode jpeg --max-resolution 256 --jpeg-quality 90 \
  --workers 2 --trace "$out/bench.trace" --report "$out/bench-trace.json" --rejects "$out/bench-trace.rejects" -q
traced=$(/usr/bin/python3 bench/tracebusy.py "$out/bench.trace" |
  awk '/^head/ {h=$(NF-1)} /^tail/ {t=$(NF-1)} /^busy/ {b=$5} END {printf "workers busy %s of the run, %s ms before the first sample, %s ms after the last", b, h, t}')
rm -f "$out"/bench-trace.* "$out/bench.trace"

med() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
maxof() { tr ' ' '\n' | grep -v '^$' | sort -g | tail -1; }
list() { echo "$1" | xargs | sed 's/ / \/ /g'; }
ratios() { # A B: per-run A/B
  local -a a b
  read -ra a <<<"${ips[$1]}"
  read -ra b <<<"${ips[$2]}"
  local s="" i
  for i in "${!a[@]}"; do s+=" $(echo "${a[$i]} / ${b[$i]}" | bc -l | xargs printf '%.2f')"; done
  list "$s"
}
row() { # KEY BUILD JOB WORKERS
  local k=$1
  printf "| %s | %s | %s | %s | %s | %s | %s |\n" "$2" "$3" "$4" "$(list "${ips[$k]}")" \
    "$([ -n "${cpu[$k]:-}" ] && echo "${cpu[$k]}" | med || echo -)" "$(echo "${mbs[$k]}" | med)" \
    "$([ -n "${rss[$k]:-}" ] && echo "${rss[$k]}" | maxof || echo -)"
}

table="$out/images.md"
{
  echo "Machine: $(nproc) x $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo); $runs runs; load average (1, 5, 15 min) before each run: $(printf '%s; ' "${loads[@]}")"
  echo
  echo "| build | job | workers | images/s (run 1 / 2 / ...) | CPU ms/image (median) | MB/s in (median) | peak RSS MiB (max) |"
  echo "|---|---|---|---|---|---|---|"
  row cat "(read the files: cat > /dev/null)" - 1
  row plain "(plain write: cat > file; sync file)" - 1
  row jpeg-1 "TurboJPEG (cgo)" "jpeg, max 256, q90" 1
  row jpeg-2 "TurboJPEG (cgo)" "jpeg, max 256, q90" 2
  row pair "(2 processes of 1 worker at once, half the files each)" "jpeg, max 256, q90" "1+1"
  [ "$beton" = 1 ] && row beton-1 "TurboJPEG (cgo), .beton" "jpeg, max 256, q90" 1
  [ "$beton" = 1 ] && row beton-2 "TurboJPEG (cgo), .beton" "jpeg, max 256, q90" 2
  row smart-1 "TurboJPEG (cgo)" "smart, max 512 (all pass through)" 1
  row smart-2 "TurboJPEG (cgo)" "smart, max 512 (all pass through)" 2
  [ -n "$shm" ] && row smart-shm "TurboJPEG (cgo), output on tmpfs ($shm: no disk)" "smart, max 512 (all pass through)" 2
  row purego-1 "pure Go (CGO_ENABLED=0)" "jpeg, max 256, q90" 1
  row purego-2 "pure Go (CGO_ENABLED=0)" "jpeg, max 256, q90" 2
  [ "$ffcv" = 1 ] && row ffcv-2 "FFCV 1.0.2 DatasetWriter (bench/ffcv_write.py; output $((ffcvsize / 1000)) kB)" "jpeg, max 256, q90" 2
  echo
  if [ "$ffcv" = 1 ]; then
    echo "- jpeg, 2 workers, over FFCV's DatasetWriter (2 workers) in the same run: $(ratios jpeg-2 ffcv-2)x"
    [ "$beton" = 1 ] && echo "- .beton, 2 workers, over FFCV's DatasetWriter (2 workers) in the same run: $(ratios beton-2 ffcv-2)x"
  else
    echo "- FFCV's DatasetWriter: not measured (no test venv with ffcv: scripts/deps test)"
  fi
  echo "- TurboJPEG alone on these files, CPU µs per image, per run: 1/8 decode $(list "${tjf[*]}"), 4/8 decode $(list "${tjh[*]}")"
  echo "- jpeg, 2 workers over 1 worker, same run: $(ratios jpeg-2 jpeg-1); the machine's own scaling (2 processes of 1 worker over 1 worker): $(ratios pair jpeg-1); 2 workers over the 2 processes: $(ratios jpeg-2 pair)"
  echo "- smart over reading the files, same run: 1 worker $(ratios smart-1 cat); 2 workers $(ratios smart-2 cat)"
  [ -n "$shm" ] && echo "- smart, output on tmpfs, over reading the files, same run: 2 workers $(ratios smart-shm cat)"
  echo "- smart over the plain durable write, same run: 1 worker $(ratios smart-1 plain); 2 workers $(ratios smart-2 plain)"
  echo "- jpeg output quality (bench/imgpsnr.py): $(cat "$out/psnr.txt")"
  echo "- jpeg, 2 workers, one traced run (bench/tracebusy.py): $traced"
} >"$table"
cat "$table"

echo
echo "Page writer alone vs a plain sequential write of the same bytes:"
go test ./pagewriter -run '^$' -bench 'PageWriter|SequentialWrite' -benchtime 3x 2>&1 | grep -E '^Benchmark|MB/s'
