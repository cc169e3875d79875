#!/usr/bin/env bash
# Tar shards benchmark: MB/s of WebDataset tar -> .mldf with smart pass-through
# (every JPEG kept as its bytes), workers 1 and 2, beside reading the shards; and MB/s of
# `convert index` on a 1 GB tar (headers only: it seeks over payloads).
#   bench/tar.sh [N]           results: bench/out/tar.md
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-2000}
data=bench/data/images$n
shards=bench/data/wds$n
out=bench/out
mkdir -p "$out" bench/data
scripts/deps
go build -o "$out/convert" ./cmd/convert
[ -d "$data" ] || go run ./bench/genimages -out "$data" -n "$n"
if [ ! -d "$shards" ]; then
  "$out/convert" images "$data" "$out/wds-src.mldf" --mode smart --report "$out/wds-src.json" --rejects "$out/wds-src.rej" >/dev/null 2>&1
  "$out/convert" export "$out/wds-src.mldf" "$shards" --format webdataset --shard-size 32MiB >/dev/null
  rm -f "$out/wds-src.mldf" "$out/wds-src.json" "$out/wds-src.rej"
fi
bytes=$(du -sb "$shards" | cut -f1)
cat "$shards"/*.tar >/dev/null
t0=$(date +%s.%N); cat "$shards"/*.tar >/dev/null; t1=$(date +%s.%N)
table="$out/tar.md"
{
  echo "| job | workers | samples/s | MB/s in | peak RSS MiB | seconds |"
  echo "|---|---|---|---|---|---|"
  printf "| cat the shards | 1 | - | %.0f | - | %.2f |\n" "$(echo "$bytes / 1000000 / ($t1 - $t0)" | bc -l)" "$(echo "$t1 - $t0" | bc -l)"
} > "$table"
recipe=$(mktemp --suffix .yaml)
cat > "$recipe" <<YAML
source: {type: tar, inputs: ["$shards/*.tar"]}
fields:
  - {name: image, type: image, from: jpg, mode: smart, max_resolution: 512}
  - {name: label, type: int, from: cls}
output: $out/bench-tar.mldf
YAML
for w in 1 2; do
  "$out/convert" run "$recipe" --workers "$w" --report "$out/tar.json" --rejects "$out/tar.rej" >/dev/null 2>&1
  jq -r --arg w "$w" '"| tar -> mldf, smart | \($w) | \(.samples_per_second|floor) | \(.input_mb_per_second|floor) | \(.peak_rss_bytes/1048576|floor) | \(.elapsed_seconds*100|floor/100) |"' "$out/tar.json" >> "$table"
done
rm -f "$recipe" "$out/bench-tar.mldf" "$out/tar.json" "$out/tar.rej"
cat "$table"
echo
echo "convert index on a generated 1 GB tar (sparse payloads; 100 KB and 4 KB members):"
go test ./format/taridx -run '^$' -bench Index -benchtime 3x 2>&1 | grep -E '^Benchmark'
