#!/usr/bin/env bash
# Inputs in a bucket vs on local disk: the tar-shard job of bench/tar.sh with its
# shards read from versitygw (a local S3 server over the same disk, so the gap is the S3 path:
# HTTP, SigV4, the gateway's own work, not a network) and from the directory itself.
#   bench/bucket.sh [N] [RUNS]      results: bench/out/bucket.md
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-2000}
runs=${2:-3}
data=bench/data/images$n
shards=bench/data/wds$n
out=bench/out
mkdir -p "$out" bench/data
scripts/deps test >/dev/null
go build -o "$out/convert" ./cmd/convert
[ -d "$data" ] || go run ./bench/genimages -out "$data" -n "$n"
if [ ! -d "$shards" ]; then
  "$out/convert" images "$data" "$out/wds-src.mldf" --mode smart --report "$out/wds-src.json" --rejects "$out/wds-src.rej" >/dev/null 2>&1
  "$out/convert" export "$out/wds-src.mldf" "$shards" --format webdataset --shard-size 32MiB >/dev/null
  rm -f "$out/wds-src.mldf" "$out/wds-src.json" "$out/wds-src.rej"
fi
gw=$(command -v versitygw || echo "$(go env GOPATH)/bin/versitygw")
tmp=$(mktemp -d)
trap 'kill $gwpid 2>/dev/null; wait $gwpid 2>/dev/null; rm -rf "$tmp"' EXIT
mkdir -p "$tmp/data/bkt"
cp "$shards"/*.tar "$tmp/data/bkt/"   # the posix backend serves the files of its folders
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
ROOT_ACCESS_KEY=bench-key ROOT_SECRET_KEY=bench-secret "$gw" --port "127.0.0.1:$port" --quiet posix "$tmp/data" >"$tmp/gw.log" 2>&1 &
gwpid=$!
for _ in $(seq 100); do (echo >/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done
export AWS_ACCESS_KEY_ID=bench-key AWS_SECRET_ACCESS_KEY=bench-secret AWS_REGION=us-east-1 \
  AWS_ENDPOINT_URL_S3="http://127.0.0.1:$port" AWS_EC2_METADATA_DISABLED=true \
  AWS_CONFIG_FILE=/dev/null/none AWS_SHARED_CREDENTIALS_FILE=/dev/null/none
recipe() {
  cat > "$tmp/r.yaml" <<YAML
source: {type: tar, inputs: ["$1"]}
fields:
  - {name: image, type: image, from: jpg, mode: smart, max_resolution: 512}
  - {name: label, type: int, from: cls}
output: $tmp/out.mldf
YAML
}
table="$out/bucket.md"
{
  echo "| inputs | run | samples/s | MB/s in | peak RSS MiB | seconds |"
  echo "|---|---|---|---|---|---|"
} > "$table"
for r in $(seq "$runs"); do
  for where in local bucket; do
    if [ $where = local ]; then recipe "$PWD/$shards/*.tar"; else recipe "s3://bkt/*.tar"; fi
    "$out/convert" run "$tmp/r.yaml" --workers 2 --report "$tmp/r.json" --rejects "$tmp/r.rej" >/dev/null 2>&1
    jq -r --arg w "$where" --arg r "$r" '"| \($w) | \($r) | \(.samples_per_second|floor) | \(.input_mb_per_second|floor) | \(.peak_rss_bytes/1048576|floor) | \(.elapsed_seconds*100|floor/100) |"' "$tmp/r.json" >> "$table"
    cmp -s "$tmp/out.mldf" "$tmp/out-local.mldf" 2>/dev/null && echo "  ($where: output identical to local)" >&2
    [ $where = local ] && cp "$tmp/out.mldf" "$tmp/out-local.mldf"
    rm -f "$tmp/out.mldf" "$tmp/r.json" "$tmp/r.rej"
  done
done
cat "$table"
