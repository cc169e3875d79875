#!/usr/bin/env bash
# Training loaders side by side in one run: the bench/images.sh set of N photo-like
# 500x375 JPEGs, stored as JPEG q90 at max side 256 with the int label, read with the usual
# ImageNet training transform (random-resized crop to S, random horizontal flip, uint8 CHW
# batches of B, shuffled, 2 workers or threads) at S = 160 and 224, B = 128 and 256, by:
#   - FFCV 1.0's own Loader on a .beton written by FFCV's own DatasetWriter (bench/ffcv_write.py);
#   - a plain ImageFolder read with Pillow in a torch DataLoader (torchvision's transforms when
#     present, else the same crop written with Pillow);
#   - our mldf.Loader on the .mldf convert makes of the same images with the same job, on the
#     .beton convert makes, and on the .mldf in a bucket (versitygw on loopback, as the Go tests
#     start it), once warm. Our rows print "not available" while the package has no Loader.
# Each row is its own process (bench/loader.py): images/s per epoch after a warm-up epoch (FFCV
# compiles its pipeline then), best and median of EPOCHS, CPU ms per image (user+sys of the
# process and its DataLoader workers), peak RSS. The FFCV and folder rows need the test venv
# (scripts/deps test).
#   bench/loader.sh [N] [EPOCHS]        results: bench/out/loader.md
# A subset for a quick check (the table keeps the same columns): SIZES="160" BATCHES="128"
# ROWS="ffcv mldf" (of ffcv folder mldf beton s3) bench/loader.sh 1000 2. The mldf rows add the
# decoding threads' busy fraction (loader.stats()) and the cores the process used, split into
# Go's threads (decoding, runtime), the prefetch thread and the main thread, with the share of
# a decoding thread's busy time it was on a core (its thread clock);
# the other rows the cores of their busiest OS threads; every row the load average after it.
# MLDF_LIBRARY (a built libmldf.so) and MLDF_PYTHON (a python/ directory) point the mldf rows at
# another build; by default cmd/libmldf and python/ of this tree.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-2000}
epochs=${2:-4}
data=bench/data/images$n
out=bench/out
mkdir -p "$out" bench/data
scripts/deps test >/dev/null
py=${MLDF_VENV:-$PWD/.venv}/bin/python
[ -x "$py" ] || py=/usr/bin/python3
go build -o "$out/convert" ./cmd/convert
[ -d "$data" ] || go run ./bench/genimages -out "$data" -n "$n"
if [ -d cmd/libmldf ] && [ -z "${MLDF_LIBRARY:-}" ]; then
  go build -buildmode=c-shared -o "$out/libmldf.so" ./cmd/libmldf
  export MLDF_LIBRARY=$PWD/$out/libmldf.so
fi
# MLDF_PYTHON: another tree's python/ to benchmark (default this one's).
export PYTHONPATH=${MLDF_PYTHON:-$PWD/python}${PYTHONPATH:+:$PYTHONPATH}

job=(--mode jpeg --max-resolution 256 --jpeg-quality 90 --workers 2)
rm -f "$out"/loader.{mldf,beton}* "$out"/loader-ffcv.beton
"$out/convert" images "$data" "$out/loader.mldf" "${job[@]}" --report "$out/loader.mldf.json" >/dev/null 2>&1
"$out/convert" images "$data" "$out/loader.beton" "${job[@]}" --format beton --report "$out/loader.beton.json" >/dev/null 2>&1
ffcv=1
"$py" bench/ffcv_write.py "$data" "$out/loader-ffcv.beton" --workers 2 >/dev/null 2>&1 || ffcv=0

# The bucket: versitygw's posix backend serving a folder that holds the .mldf.
gw=$(command -v versitygw || echo "$(go env GOPATH)/bin/versitygw")
tmp=$(mktemp -d)
gwpid=""
trap '[ -n "$gwpid" ] && kill $gwpid 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
bucket=""
if [ -x "$gw" ]; then
  mkdir -p "$tmp/data/bkt"
  cp "$out/loader.mldf" "$tmp/data/bkt/train.mldf"
  port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  ROOT_ACCESS_KEY=bench-key ROOT_SECRET_KEY=bench-secret "$gw" --port "127.0.0.1:$port" --quiet posix "$tmp/data" >"$tmp/gw.log" 2>&1 &
  gwpid=$!
  for _ in $(seq 100); do (echo >/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done
  export AWS_ACCESS_KEY_ID=bench-key AWS_SECRET_ACCESS_KEY=bench-secret AWS_REGION=us-east-1 \
    AWS_ENDPOINT_URL_S3="http://127.0.0.1:$port" AWS_EC2_METADATA_DISABLED=true \
    AWS_CONFIG_FILE=/dev/null/none AWS_SHARED_CREDENTIALS_FILE=/dev/null/none
  bucket=s3://bkt/train.mldf
fi

table="$out/loader.md"
{
  echo "Machine: $(nproc) x $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1); load average before: $(cut -d' ' -f1-3 /proc/loadavg); $n images, $epochs measured epochs after 1 warm-up"
  echo "Files: FFCV's .beton $(stat -c %s "$out/loader-ffcv.beton" 2>/dev/null || echo -) B, our .mldf $(stat -c %s "$out/loader.mldf") B, our .beton $(stat -c %s "$out/loader.beton") B"
  echo
  echo "| loader | S | B | images/s per epoch | best | median | CPU ms/image | peak RSS MiB (self / child) | threads busy / starved | cores: all = Go + prefetch + main; on-core | load after |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
} >"$table"
declare -A best
row() { # LABEL KEY KIND PATH S B
  local j p=$4
  [[ $p == *://* ]] || p=$PWD/$p
  j=$(cd /tmp && "$py" "$OLDPWD/bench/loader.py" "$3" "$p" --size "$5" --batch "$6" --epochs "$epochs" 2>"$tmp/row.err" | tail -1) || true
  if [ -z "$j" ]; then j="{\"available\": false, \"why\": $(tail -c 300 "$tmp/row.err" | jq -Rs .)}"; fi
  if [ "$(jq -r .available <<<"$j")" = true ]; then
    best[$2-$5-$6]=$(jq -r .best <<<"$j")
    jq -r --arg l "$1" '"| \($l)\(if .how != "" then " (" + .how + ")" else "" end) | \(.size) | \(.batch) | \(.images_per_s|map(tostring)|join(" / ")) | \(.best) | \(.median) | \(.cpu_ms_per_image) | \(.peak_rss_mib) / \(.peak_rss_child_mib) | \(if .threads then "\(.threads.utilisation) / \(.threads.starved)" else "-" end) | \(if .threads.cores_go then "\(.threads.cores) = \(.threads.cores_go) + \(.threads.cores_prefetch) + \(.threads.cores_main); \(.threads.on_core)" else "threads: \(.task_cores[:4]|join(" "))" end) | \(.load_average) |"' <<<"$j" >>"$table"
  else
    jq -r --arg l "$1" --arg s "$5" --arg b "$6" '"| \($l) | \($s) | \($b) | not available: \(.why|gsub("\\|";"/")|gsub("\n";" ")) | | | | | | | |"' <<<"$j" >>"$table"
  fi
  tail -1 "$table" >&2
}
sizes=${SIZES:-160 224}
batches=${BATCHES:-128 256}
rows=" ${ROWS:-ffcv folder mldf beton s3} "
want() { [[ $rows == *" $1 "* ]]; }
for s in $sizes; do
  for b in $batches; do
    if ! want ffcv; then :
    elif [ "$ffcv" = 1 ]; then row "FFCV Loader, FFCV's .beton" ffcv ffcv "$out/loader-ffcv.beton" $s $b
    else echo "| FFCV Loader | $s | $b | not available: no FFCV in the test venv | | | | | | | |" >>"$table"; fi
    if want folder; then row "folder, Pillow + DataLoader" folder folder "$data" $s $b; fi
    if want mldf; then row "mldf.Loader, our .mldf" mldf mldf "$out/loader.mldf" $s $b; fi
    if want beton; then row "mldf.Loader, our .beton" beton mldf "$out/loader.beton" $s $b; fi
    if ! want s3; then :
    elif [ -n "$bucket" ]; then row "mldf.Loader, our .mldf in a bucket (versitygw, loopback)" s3 mldf "$bucket" $s $b
    else echo "| mldf.Loader, bucket | $s | $b | not available: no versitygw (scripts/deps test) | | | | | | | |" >>"$table"; fi
  done
done
ratio() { if [ -n "${best[$1]:-}" ] && [ -n "${best[$2]:-}" ]; then jq -n "${best[$1]} / ${best[$2]} * 100 | floor / 100"; else echo -; fi; }
{
  echo
  for s in $sizes; do for b in $batches; do
    echo "- S=$s B=$b, best epoch over FFCV's: our .mldf $(ratio mldf-$s-$b ffcv-$s-$b)x, our .beton $(ratio beton-$s-$b ffcv-$s-$b)x, folder $(ratio folder-$s-$b ffcv-$s-$b)x; bucket over local .mldf $(ratio s3-$s-$b mldf-$s-$b)x"
  done; done
} >>"$table"
cat "$table"
