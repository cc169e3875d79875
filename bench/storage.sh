#!/usr/bin/env bash
# Object storage benchmark: the same conversions written to local disk and to a
# local S3 server (versitygw over a temporary folder on the same disk: the figures show our
# overhead and the gateway's, not a network's), and the merge of a 4-task sharded run locally
# (copy_file_range) and in the bucket (server-side UploadPartCopy).
#   bench/storage.sh [JSONL_MB] [IMAGES] [RUNS]     results: bench/out/storage.md
# Inputs are local in both cases (reading from buckets is measured by bench for the sources).
set -euo pipefail
cd "$(dirname "$0")/.."
mb=${1:-200}
n=${2:-2000}
runs=${3:-2}
out=bench/out
mkdir -p "$out" bench/data
for tool in go jq bc; do
  command -v "$tool" >/dev/null || { echo "storage.sh: $tool is required" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "storage.sh: /usr/bin/time is required (peak RSS)" >&2; exit 1; }
gw=$(command -v versitygw || echo "$(go env GOPATH)/bin/versitygw")
[ -x "$gw" ] || { echo "storage.sh: versitygw not found (scripts/deps test)" >&2; exit 1; }
go build -o "$out/convert" ./cmd/convert
jsonl=bench/data/corpus-${mb}mb.jsonl
[ -f "$jsonl" ] || { go run ./bench/genjsonl -out "$jsonl.tmp" -mb "$mb" && mv "$jsonl.tmp" "$jsonl"; }
imgs=bench/data/images-$n
[ -d "$imgs" ] || go run ./bench/genimages -out "$imgs" -n "$n"

tmp=$(mktemp -d)
port=$(( 20000 + RANDOM % 20000 ))
mkdir -p "$tmp/s3/bkt" "$tmp/local"
ROOT_ACCESS_KEY=bench ROOT_SECRET_KEY=bench-secret "$gw" --port "127.0.0.1:$port" --quiet posix "$tmp/s3" >"$tmp/gw.log" 2>&1 &
gwpid=$!
trap 'kill $gwpid 2>/dev/null; wait $gwpid 2>/dev/null; rm -rf "$tmp"' EXIT
export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench-secret AWS_REGION=us-east-1 \
  AWS_ENDPOINT_URL_S3="http://127.0.0.1:$port" AWS_EC2_METADATA_DISABLED=true \
  AWS_CONFIG_FILE=/dev/null/none AWS_SHARED_CREDENTIALS_FILE=/dev/null/none
for _ in $(seq 50); do (echo >/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done

cat >"$tmp/text.yaml" <<EOF
source: {type: jsonl, inputs: ["$PWD/$jsonl"]}
fields: [{name: text, type: text}]
output: unused.mldf
EOF

# one LABEL OUTPUT CMD...: runs CMD with /usr/bin/time, prints a table row from the report.
one() {
  local label=$1 dest=$2; shift 2
  local t0 t1
  t0=$(date +%s.%N)
  /usr/bin/time -f '%M %U %S' -o "$tmp/time" "$@" >"$tmp/stdout" 2>"$tmp/stderr" || { cat "$tmp/stderr" >&2; exit 1; }
  t1=$(date +%s.%N)
  local rep=$tmp/rep.json
  case $dest in s3://*) cp "$tmp/s3/bkt/${dest#s3://bkt/}.report.json" "$rep" ;; *) cp "$dest.report.json" "$rep" ;; esac
  read -r rss u s <"$tmp/time"
  jq -r --arg l "$label" --arg w "$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b-a}')" --arg rss "$((rss / 1024))" --arg cpu "$(awk -v u="$u" -v s="$s" 'BEGIN{printf "%.1f", u+s}')" \
    '"| \($l) | \(.num_samples) | \(.samples_per_second|floor) | \(.input_mb_per_second*10|floor/10) | \(.output_bytes/1e6*10|floor/10) | \($w) | \($cpu) | \($rss) |"' "$rep"
}

table=$out/storage.md
{
  printf "JSONL %s (%s MB), images %s (%s files). Load average at start: %s. Runs: %s.\n\n" "$jsonl" "$mb" "$imgs" "$n" "$(cut -d' ' -f1-3 /proc/loadavg)" "$runs"
  echo "| conversion → destination | samples | samples/s | MB/s in | MB out | wall s | CPU s | peak RSS MiB |"
  echo "|---|---|---|---|---|---|---|---|"
  for r in $(seq "$runs"); do
    one "JSONL text → local disk (run $r)" "$tmp/local/text.mldf" "$out/convert" run "$tmp/text.yaml" --output "$tmp/local/text.mldf" --workers 2
    one "JSONL text → s3:// (run $r)" s3://bkt/text.mldf "$out/convert" run "$tmp/text.yaml" --output s3://bkt/text.mldf --workers 2
    cmp "$tmp/local/text.mldf" "$tmp/s3/bkt/text.mldf"
    one "images jpeg → local disk (run $r)" "$tmp/local/img.mldf" "$out/convert" images "$imgs" "$tmp/local/img.mldf" --mode jpeg --max-resolution 256 --workers 2
    one "images jpeg → s3:// (run $r)" s3://bkt/img.mldf "$out/convert" images "$imgs" s3://bkt/img.mldf --mode jpeg --max-resolution 256 --workers 2
    cmp "$tmp/local/img.mldf" "$tmp/s3/bkt/img.mldf"
  done
  echo
  # The corpus in 8 files, so that 4 tasks get 2 each.
  mkdir -p "$tmp/split"
  split -n l/8 -d --additional-suffix=.jsonl "$jsonl" "$tmp/split/c"
  printf 'source: {type: jsonl, inputs: ["%s/split/c*.jsonl"]}\nfields: [{name: text, type: text}]\noutput: unused.mldf\n' "$tmp" >"$tmp/shard.yaml"
  echo "Merge of a 4-task sharded run of the JSONL job (the corpus split in 8 files; parts made by convert run --shard I --shards 4):"
  echo
  echo "| merge | wall s | CPU s | peak RSS MiB | copy |"
  echo "|---|---|---|---|---|"
  for i in 0 1 2 3; do
    "$out/convert" run "$tmp/shard.yaml" --output "$tmp/local/m.mldf" --shard $i --shards 4 --workers 2 >/dev/null 2>&1
    "$out/convert" run "$tmp/shard.yaml" --output s3://bkt/m.mldf --shard $i --shards 4 --workers 2 >/dev/null 2>&1
  done
  for r in $(seq "$runs"); do
    for dest in "$tmp/local/m.mldf" s3://bkt/m.mldf; do
      t0=$(date +%s.%N)
      /usr/bin/time -f '%M %U %S' -o "$tmp/time" "$out/convert" merge "$dest" --check-parts=false >"$tmp/stdout" 2>"$tmp/stderr" || { cat "$tmp/stderr" >&2; exit 1; }
      t1=$(date +%s.%N)
      read -r rss u s <"$tmp/time"
      how=$(sed -n 's/.*by \(.*\)) in.*/\1/p' "$tmp/stdout")
      printf "| %s (run %s) | %.2f | %.1f | %d | %s |\n" "$dest" "$r" "$(echo "$t1 - $t0" | bc -l)" "$(echo "$u + $s" | bc -l)" $((rss / 1024)) "$how"
    done
    cmp "$tmp/local/m.mldf" "$tmp/s3/bkt/m.mldf"
  done
} | tee "$table"
