#!/usr/bin/env bash
# Dedup benchmark (issue 30 §3): N JSONL samples (default 10^7) with a small payload
# ({"n": I, "text": 32 digits}), one in ten repeating an earlier sample's text, converted with
# --workers 2 to TEXT_RAW + INT without dedup and with `--dedup text` (mode drop). Reports
# each run's wall time, CPU seconds (user+sys: less disturbed by a loaded machine than the
# wall time), samples/s, peak RSS (/usr/bin/time %M, and the report's peak_rss_bytes) and the
# duplicates found, and the throughput cost of dedup (by wall time and by CPU time). The dedup
# table's memory is capped (64 MiB by default: a Bloom filter, a memtable, the runs' indexes);
# its sorted runs are files in TMPDIR.
#   bench/dedup.sh [N]     results: bench/out/dedup-N.md
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10000000}
data=bench/data/dedup2-$n.jsonl
out=bench/out
mkdir -p "$out" bench/data
for tool in go jq awk; do
  command -v "$tool" >/dev/null || { echo "dedup.sh: $tool is required" >&2; exit 1; }
done
go build -o "$out/convert" ./cmd/convert
if [ ! -f "$data" ]; then # line i repeats line k when i%10 == 9: k spread over [0, i) (k%10 == 0, never a repeat)
  awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++) { k = i; if (i % 10 == 9) k = int((i * 7919 % 1000003) / 1000003 * i / 10) * 10; printf "{\"n\": %d, \"text\": \"%032d\"}\n", i, k } }' >"$data.tmp"
  mv "$data.tmp" "$data"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat "$data" >/dev/null # warm page cache
cat >"$tmp/r.yaml" <<YAML
source: {type: jsonl, inputs: [$PWD/$data]}
fields:
  - {name: text, type: text}
  - {name: n, type: int}
workers: 2
YAML
res="$out/dedup-$n.md"
{
  echo "# dedup benchmark: $n samples, 10% duplicates ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg))"
  echo
  echo "| run | wall s | CPU s (user+sys) | samples/s | peak RSS MiB (time) | peak RSS MiB (report) | samples written | duplicates |"
  echo "|---|---|---|---|---|---|---|---|"
} >"$res"
declare -A rate cpu
for mode in off drop; do
  flags=()
  [ "$mode" = drop ] && flags=(--dedup text)
  o="$tmp/o-$mode.mldf"
  /usr/bin/time -f '%M %e %U %S' -o "$tmp/time" "$out/convert" run "$tmp/r.yaml" --output "$o" "${flags[@]}" >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
  read -r kb wall usr sys <"$tmp/time"
  cpu[$mode]=$(awk -v u="$usr" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
  rep="$o.report.json"
  s=$(jq .num_samples "$rep"); d=$(jq .num_duplicates "$rep"); rss=$(jq .peak_rss_bytes "$rep")
  rate[$mode]=$(awk -v n="$n" -v w="$wall" 'BEGIN { printf "%.0f", n / w }')
  printf '| %s | %s | %s | %s | %.0f | %.0f | %s | %s |\n' "$mode" "$wall" "${cpu[$mode]}" "${rate[$mode]}" "$(echo "$kb / 1024" | bc -l)" "$(echo "$rss / 1048576" | bc -l)" "$s" "$d" >>"$res"
  rm -f "$o"
done
awk -v a="${rate[off]}" -v b="${rate[drop]}" -v ca="${cpu[off]}" -v cb="${cpu[drop]}" 'BEGIN { printf "\nthroughput with dedup: %.2fx of without (cost %.0f%%); CPU time %.2fx (cost %.0f%%)\n", b / a, 100 * (1 - b / a), cb / ca, 100 * (cb / ca - 1) }' >>"$res"
cat "$res"
