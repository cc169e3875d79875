#!/usr/bin/env bash
# Text benchmark: a deterministic JSONL corpus of English-like documents
# (bench/genjsonl: {"id", "text", "meta": {"lang", "score"}}, ~200 MB) converted with --workers
# 1 and 2 to TEXT_RAW (field type text from "text") and to TEXT_TOKENIZED (type tokens,
# cl100k_base). Reports MB/s of JSONL input, peak RSS and output size (from each run's report
# JSON) beside the time to read the file (cat > /dev/null, warm page cache).
# WORDS, when given, is the median words per document (genjsonl -words): 14 gives fortune-sized
# lines of about 270 bytes (the fortune-sized target), the default about 2 KB lines.
# The 2-worker TEXT_RAW run is followed by its disk anchor, a plain durable copy of its output
# (the part of the run no converter can skip), and by the same run with its output on tmpfs
# (TMPFS, default /dev/shm; TMPFS= skips it): the converter's speed without the disk.
# ONLY=raw runs the TEXT_RAW conversions alone, ONLY=tokens the tokenized ones alone.
#
# Real text (REAL=1, the default; REAL=0 skips it): JSONL built from Debian's fortunes,
# fortunes-de/-es/-it/-ru and manpages packages (apt-get download, dpkg-deb -x, then
# bench/realtext: one {"id", "lang", "source", "text"} object per fortune or man page),
# repeated to the sizes of REAL_MB (default fortunes-en=120,fortunes-eu=60,fortunes-ru=199,
# manpages=139: about 530 MB, the issue's 518 MB mix). Each part converts to TEXT_RAW with 1 and 2 workers, output on
# tmpfs (the converter's speed), then the whole mix with 1 and 2 workers to disk (durable), the
# disk anchor (a durable copy of that output), and the 2-worker mix again with its output on tmpfs. The packages and the corpus stay in bench/data/realtext (not committed).
# Every TEXT_RAW row gives the output's sha256 (its first 12 hex digits): a faster build
# must write the same bytes.
#   bench/text.sh [MB] [WORDS]     results: bench/out/text.md (text-wWORDS.md with WORDS)
set -euo pipefail
cd "$(dirname "$0")/.."
mb=${1:-200}
words=${2:-}
data=$PWD/bench/data/corpus-${mb}mb${words:+-w$words}.jsonl
out=bench/out
mkdir -p "$out" bench/data
for tool in go jq bc; do
  command -v "$tool" >/dev/null || { echo "text.sh: $tool is required" >&2; exit 1; }
done
go build -o "$out/convert" ./cmd/convert
if [ ! -f "$data" ]; then
  go run ./bench/genjsonl -out "$data.tmp" -mb "$mb" ${words:+-words "$words"}
  mv "$data.tmp" "$data"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# CPU seconds (user + sys, children included) of a command, so that figures taken on a busy
# machine can be compared: timed CMD... runs it; cpu prints the seconds of the last one.
timed() {
  if [ -x /usr/bin/time ]; then /usr/bin/time -f '%U %S' -o "$tmp/cpu" "$@"; else echo "- -" >"$tmp/cpu"; "$@"; fi
}
cpu() { awk 'NF == 2 { if ($1 == "-") print "-"; else printf "%.2f", $1 + $2 }' "$tmp/cpu"; }

bytes=$(stat -c %s "$data")
lines=$(wc -l <"$data")
cat "$data" >/dev/null # warm the page cache
t0=$(date +%s.%N); cat "$data" >/dev/null; t1=$(date +%s.%N)
read_s=$(echo "$t1 - $t0" | bc -l)

table="$out/text${words:+-w$words}.md"
{
  printf "Corpus: %s, %d lines, %.1f MB. Load average at start: %s.\n\n" "$data" "$lines" "$(echo "$bytes / 1000000" | bc -l)" "$(cut -d' ' -f1-3 /proc/loadavg)"
  echo "| conversion | workers | MB/s in | lines/s | peak RSS MiB | seconds | CPU s | MB / CPU-s | CPU-ms / MB | payload MB out | tokens | output sha256 |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
  printf "| (cat the file) | 1 | %.0f | %.0f | - | %.2f | - | - | - | - | - | - |\n" "$(echo "$bytes / 1000000 / $read_s" | bc -l)" "$(echo "$lines / $read_s" | bc -l)" "$read_s"
} >"$table"

run() { # label workers [yaml lines of the field...]; inputs: $in (default $data), $in_bytes
  local label=$1 w=$2
  shift 2
  local o="$odir/bench.mldf" r="$tmp/recipe.yaml" inputs=${in:-$data} b=${in_bytes:-$bytes}
  {
    printf 'source:\n  type: jsonl\n  inputs: [%s]\n' "$inputs"
    printf 'fields:\n'
    for l in "$@"; do printf '  %s\n' "$l"; done
    printf 'output: %s\non_error: fail\n' "$o"
  } >"$r"
  timed "$out/convert" run "$r" --workers "$w" --report "$o.json" --rejects "$o.rejects" >"$tmp/log" 2>&1 ||
    { cat "$tmp/log" >&2; echo "text.sh: convert failed: $label workers $w" >&2; exit 1; }
  local f c tokens=- sum=-
  c=$(cpu)
  f=$("$out/convert" inspect --json "$o" 2>/dev/null | jq '.fields[0]')
  if [ "$(jq -r .type <<<"$f")" = TEXT_TOKENIZED ]; then
    # ids are int16 when the vocabulary fits, else int32 (cl100k_base: int32)
    tokens=$(jq -r '.payload_bytes / 4 | floor' <<<"$f")
  else
    sum=$(sha256sum "$o" | cut -c1-12)
  fi
  jq -r --arg l "$label" --arg w "$w" --argjson b "$b" --argjson p "$(jq .payload_bytes <<<"$f")" --arg t "$tokens" --arg c "$c" --arg s "$sum" \
    '"| \($l) | \($w) | \($b / 1000000 / .elapsed_seconds * 10 | floor / 10) | \(.samples_per_second|floor) | \(.peak_rss_bytes/1048576|floor) | \(.elapsed_seconds*100|floor/100) | \($c) | \(if $c == "-" then "-" else $b / 1000000 / ($c|tonumber) * 10 | floor / 10 end) | \(if $c == "-" then "-" else ($c|tonumber) * 1000 / ($b / 1000000) * 100 | floor / 100 end) | \($p/1000000*10|floor/10) | \($t) | \($s) |"' \
    "$o.json" >>"$table"
  if [ "${anchor_copy:-}" = 1 ]; then
    # The disk's share: a plain durable copy of this run's output (cat > file; sync file),
    # in MB/s of the run's input, so that it reads as the speed the disk alone allows.
    rm -f "$o.json" "$o.rejects"
    local t0 t1 s
    t0=$(date +%s.%N)
    cat "$o" >"$tmp/copy" && sync "$tmp/copy"
    t1=$(date +%s.%N)
    s=$(echo "$t1 - $t0" | bc -l)
    printf "| (a durable copy of that output, %.0f MB: cat > file; sync file) | 1 | %.0f | - | - | %.2f | - | - | - | - | - | - |\n" \
      "$(echo "$(stat -c %s "$o") / 1000000" | bc -l)" "$(echo "$b / 1000000 / $s" | bc -l)" "$s" >>"$table"
    rm -f "$tmp/copy"
  fi
  rm -f "$o" "$o.json" "$o.rejects"
}
odir=$tmp
# TMPFS=/dev/shm (the default when it exists) adds a 2-worker TEXT_RAW run whose output goes
# to that memory file system: the converter's own speed, without the disk; TMPFS= turns it off.
shm=${TMPFS-/dev/shm}
[ -n "$shm" ] && [ -d "$shm" ] && [ -w "$shm" ] || shm=""
only=${ONLY:-}
case $only in "" | raw | tokens) ;; *) echo "text.sh: ONLY must be raw or tokens" >&2; exit 1 ;; esac
if [ "$only" != tokens ]; then
  run "JSONL → TEXT_RAW" 1 "- name: text" "  type: text"
  anchor_copy=1 run "JSONL → TEXT_RAW" 2 "- name: text" "  type: text"
  if [ -n "$shm" ]; then
    odir=$(mktemp -d -p "$shm")
    trap 'rm -rf "$tmp" "$odir"' EXIT
    run "JSONL → TEXT_RAW, output on tmpfs ($shm: no disk)" 2 "- name: text" "  type: text"
    rm -rf "$odir"
    odir=$tmp
  fi
fi
if [ "${REAL:-1}" != 0 ] && [ "$only" != tokens ]; then
  # The real-text corpus: built once from the Debian packages.
  rt=bench/data/realtext
  real_mb=${REAL_MB:-fortunes-en=120,fortunes-eu=60,fortunes-ru=199,manpages=139}
  parts=$(tr , '\n' <<<"$real_mb" | cut -d= -f1)
  missing=0
  for p in $parts; do [ -f "$rt/$p.jsonl" ] || missing=1; done
  [ "$(cat "$rt/sizes" 2>/dev/null)" = "$real_mb" ] || missing=1
  if [ "$missing" = 1 ]; then
    if [ ! -d "$rt/root/usr/share" ]; then
      for tool in apt-get dpkg-deb; do
        command -v "$tool" >/dev/null || { echo "text.sh: $tool is required for the real-text corpus (REAL=0 skips it)" >&2; exit 1; }
      done
      mkdir -p "$rt/debs" "$rt/root"
      (cd "$rt/debs" && apt-get download fortunes fortunes-min fortunes-de fortunes-es fortunes-it fortunes-ru manpages)
      for d in "$rt"/debs/*.deb; do dpkg-deb -x "$d" "$rt/root"; done
    fi
    go run ./bench/realtext -root "$rt/root" -out "$rt" -mb "$real_mb"
    echo "$real_mb" >"$rt/sizes"
  fi
  mix="" mix_bytes=0
  {
    printf "\nReal text (bench/realtext from Debian's packages; TEXT_RAW; load average %s):\n\n" "$(cut -d' ' -f1-3 /proc/loadavg)"
    echo "| conversion | workers | MB/s in | lines/s | peak RSS MiB | seconds | CPU s | MB / CPU-s | CPU-ms / MB | payload MB out | tokens | output sha256 |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
  } >>"$table"
  for p in $parts; do
    f=$PWD/$rt/$p.jsonl
    cat "$f" >/dev/null
    pb=$(stat -c %s "$f")
    mix=${mix:+$mix, }$f mix_bytes=$((mix_bytes + pb))
    if [ -n "$shm" ]; then
      odir=$(mktemp -d -p "$shm")
      trap 'rm -rf "$tmp" "$odir"' EXIT
    fi
    for w in 1 2; do
      in=$f in_bytes=$pb run "$p ($(echo "$pb / 1000000" | bc) MB, $(wc -l <"$f") lines)${shm:+, output on tmpfs}" "$w" "- name: text" "  type: text"
    done
    [ "$odir" = "$tmp" ] || rm -rf "$odir"
    odir=$tmp
  done
  for w in 1 2; do
    in=$mix in_bytes=$mix_bytes anchor_copy=$((w == 2)) run "the whole mix ($(echo "$mix_bytes / 1000000" | bc) MB), to disk" "$w" "- name: text" "  type: text"
  done
  if [ -n "$shm" ]; then
    # The same 2-worker run with its output on tmpfs: the converter's speed on the mix
    # where the disk is not the limit (compare with the durable copy above).
    odir=$(mktemp -d -p "$shm")
    trap 'rm -rf "$tmp" "$odir"' EXIT
    in=$mix in_bytes=$mix_bytes run "the whole mix ($(echo "$mix_bytes / 1000000" | bc) MB), output on tmpfs" 2 "- name: text" "  type: text"
    rm -rf "$odir"
    odir=$tmp
  fi
fi
if [ "$only" != raw ]; then
  for w in 1 2; do run "JSONL → tokens (cl100k_base)" "$w" "- name: tokens" "  type: tokens" "  from: text" "  tokenizer: cl100k_base"; done
fi
printf "\nLoad average at end: %s.\n" "$(cut -d' ' -f1-3 /proc/loadavg)" >>"$table"
cat "$table"
