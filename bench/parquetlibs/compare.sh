#!/usr/bin/env bash
# parquet-go vs arrow-go on our workload: the 2000-image set and a 100 MB text corpus, each
# written by both libraries, read 3 times by each; CPU seconds, peak RSS and MB/s.
#   cd bench/parquetlibs && ./compare.sh
set -euo pipefail
cd "$(dirname "$0")"
root=../..
data=$root/bench/data
mkdir -p "$data"
[ -d "$data/images2000" ] || (cd $root && go run ./bench/genimages -out bench/data/images2000 -n 2000)
[ -f "$data/corpus-100mb.jsonl" ] || (cd $root && go run ./bench/genjsonl -out bench/data/corpus-100mb.jsonl -mb 100)
go build -o /tmp/parquetlibs .
go build -o /tmp/parquetlibs-awrite ./awrite
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
/tmp/parquetlibs genimg "$data/images2000" "$t/images-pqgo.parquet"
/tmp/parquetlibs gentext "$data/corpus-100mb.jsonl" "$t/text-pqgo.parquet"
/tmp/parquetlibs-awrite img "$data/images2000" "$t/images-arrow.parquet"
/tmp/parquetlibs-awrite text "$data/corpus-100mb.jsonl" "$t/text-arrow.parquet"
for f in "$t"/*.parquet; do
  for lib in pq arrow; do
    for i in 1 2 3; do
      /usr/bin/time -f "%U %S %M" -o "$t/time" /tmp/parquetlibs $lib "$f" >"$t/out"
      read -r u s m <"$t/time"
      echo "$lib $(basename "$f"): $(cut -d: -f2 "$t/out" | cut -d, -f1), CPU $(echo "$u + $s" | bc) s, peak RSS $((m / 1024)) MiB"
    done
  done
done
for lib in pq arrow; do
  echo "== $lib on parquet-testing/bad_data (error, PANIC or HANG)"
  /tmp/parquetlibs bad $lib $root/../shared/testdata/parquet-testing/bad_data/*.parquet
done
