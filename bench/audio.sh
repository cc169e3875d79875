#!/usr/bin/env bash
# Audio benchmark: a deterministic Speech Commands-style class-folder tree of
# speech-like 48 kHz 16-bit mono WAV clips (bench/genaudio, ~10 s each) and the same clips as
# FLAC (flac -5), converted with --workers 1 and 2:
#   WAV -> PCM int16        (field type audio)
#   FLAC -> FLAC passthrough (field type flac on the FLAC tree: original bytes, MD5 checked)
#   WAV -> FLAC             (field type flac on the WAV tree: our encoder)
#   WAV 48 kHz -> 16 kHz    (field type audio, sample_rate 16000)
# Reports hours of audio per minute of wall time, MB/s of input and peak RSS (from each run's
# report JSON), beside the reference tools in the same run: `flac -t` (decode + MD5 check)
# over the same FLACs next to the pass-through rows, `flac -5 -s -f` over the same WAVs next
# to WAV → FLAC (each as one process, and two via xargs -P2), and the size of our FLAC
# payloads vs flac -5's files. CPU seconds (user+sys, children included) are reported beside
# wall time, and the closing lines give same-run ratios of CPU seconds, which stay meaningful
# on a shared machine. Warm page cache: the files are read once first.
#   bench/audio.sh [TOTAL]     TOTAL: total audio duration (Go duration, default 40m)
#   results: bench/out/audio.md
set -euo pipefail
cd "$(dirname "$0")/.."
total=${1:-40m}
rate=48000
data=bench/data/audio-$total
out=bench/out
mkdir -p "$out" bench/data
for tool in go jq bc flac; do
  command -v "$tool" >/dev/null || { echo "audio.sh: $tool is required" >&2; exit 1; }
done
go build -o "$out/convert" ./cmd/convert
if [ ! -d "$data" ]; then # generate into a temporary folder so an interrupted run leaves nothing
  rm -rf "$data.tmp"
  go run ./bench/genaudio -out "$data.tmp/wav" -flac-out "$data.tmp/flac" -total "$total" -rate "$rate"
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

mapfile -t wavs < <(find "$data/wav" -name '*.wav' | LC_ALL=C sort)
nfiles=${#wavs[@]}
wav_bytes=$(du -sb "$data/wav" | cut -f1)
flac_bytes=$(du -sb "$data/flac" | cut -f1)
# 16-bit mono with 44-byte headers (bench/genaudio): frames = (bytes - 44 per file) / 2
hours=$(echo "($wav_bytes - 44 * $nfiles) / 2 / $rate / 3600" | bc -l)
cat "${wavs[@]}" >/dev/null; find "$data/flac" -type f -exec cat {} + >/dev/null # warm the cache
t0=$(date +%s.%N); cat "${wavs[@]}" >/dev/null; t1=$(date +%s.%N)
read_s=$(echo "$t1 - $t0" | bc -l)

table="$out/audio.md"
hpm() { echo "$hours / ($1 / 60)" | bc -l; } # hours of audio per minute of wall time
{
  printf "Dataset: %d clips, %.2f h of %d Hz 16-bit mono speech-like audio; WAV %.0f MB, FLAC (flac -5) %.0f MB. Load average at start: %s.\n\n" \
    "$nfiles" "$hours" "$rate" "$(echo "$wav_bytes / 1000000" | bc -l)" "$(echo "$flac_bytes / 1000000" | bc -l)" "$(cut -d' ' -f1-3 /proc/loadavg)"
  echo "| conversion | tool | workers | h audio / min | MB/s in | peak RSS MiB | seconds | CPU s | h audio / CPU-min | payload MB out |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  printf "| (cat the WAVs) | cat | 1 | %.0f | %.0f | - | %.2f | - | - | - |\n" "$(hpm "$read_s")" "$(echo "$wav_bytes / 1000000 / $read_s" | bc -l)" "$read_s"
} >"$table"

run() { # label type tree workers [yaml lines for the audio field...]
  local label=$1 type=$2 tree=$3 w=$4
  shift 4
  local o="$tmp/bench.mldf" r="$tmp/recipe.yaml"
  {
    printf 'source:\n  type: audio_folder\n  path: %s\n' "$tree"
    printf 'fields:\n  - name: audio\n    type: %s\n' "$type"
    for l in "$@"; do printf '    %s\n' "$l"; done
    printf '  - name: label\n    type: int\n'
    printf 'output: %s\non_error: fail\n' "$o"
  } >"$r"
  timed "$out/convert" run "$r" --workers "$w" --report "$o.json" --rejects "$o.rejects" >"$tmp/log" 2>&1 ||
    { cat "$tmp/log" >&2; echo "audio.sh: convert failed: $label workers $w" >&2; exit 1; }
  local payload c
  c=$(cpu)
  echo "$c $(jq .elapsed_seconds "$o.json")" >"$tmp/res-$type-$(basename "$tree")-$w"
  payload=$("$out/convert" inspect --json "$o" 2>/dev/null | jq '.fields[] | select(.name == "audio") | .payload_bytes')
  echo "$payload" >"$tmp/payload-$type-$w"
  jq -r --arg l "$label" --arg w "$w" --arg h "$hours" --arg p "$payload" --arg c "$c" \
    '"| \($l) | convert | \($w) | \(($h|tonumber) / (.elapsed_seconds/60) * 100 | floor / 100) | \(.input_mb_per_second*10|floor/10) | \(.peak_rss_bytes/1048576|floor) | \(.elapsed_seconds*100|floor/100) | \($c) | \(if $c == "-" then "-" else ($h|tonumber) / (($c|tonumber)/60) * 100 | floor / 100 end) | \(($p|tonumber)/1000000*10|floor/10) |"' \
    "$o.json" >>"$table"
  rm -f "$o" "$o.json" "$o.rejects"
}
for w in 1 2; do run "WAV → PCM int16" audio "$data/wav" "$w"; done
for w in 1 2; do run "FLAC → FLAC (passthrough)" flac "$data/flac" "$w"; done

# The reference decoder on the same FLACs: decode and check the MD5 (what pass-through does).
mapfile -t flacs < <(find "$data/flac" -name '*.flac' | LC_ALL=C sort)
ref_row() { # label tool workers seconds
  local c h=-
  c=$(cpu)
  [ "$c" = - ] || h=$(printf %.2f "$(hpm "$c")")
  echo "$c $4" >"$tmp/res-ref-$(echo "$2" | tr -d " -")-$3"
  printf "| %s | %s | %s | %.2f | %.1f | - | %.2f | %s | %s | - |\n" "$1" "$2" "$3" "$(hpm "$4")" \
    "$(echo "$flac_bytes / 1000000 / $4" | bc -l)" "$4" "$c" "$h" >>"$table"
}
t0=$(date +%s.%N); timed flac -t -s "${flacs[@]}"; t1=$(date +%s.%N)
ref_row "FLAC decode + MD5 check" "flac -t" 1 "$(echo "$t1 - $t0" | bc -l)"
t0=$(date +%s.%N)
printf '%s\0' "${flacs[@]}" | timed xargs -0 -P2 -n 20 flac -t -s
t1=$(date +%s.%N)
ref_row "FLAC decode + MD5 check" "flac -t" 2 "$(echo "$t1 - $t0" | bc -l)"

for w in 1 2; do run "WAV → FLAC" flac "$data/wav" "$w"; done
ours=$(cat "$tmp/payload-flac-1")
for w in 1 2; do run "WAV 48 kHz → PCM 16 kHz" audio "$data/wav" "$w" "sample_rate: 16000"; done

# The reference encoder on the same WAVs: one process over all files, then two at a time.
flac_row() { # workers seconds dir
  local mb c h=-
  mb=$(du -sb "$3" | cut -f1)
  c=$(cpu)
  [ "$c" = - ] || h=$(printf %.2f "$(hpm "$c")")
  echo "$c $2" >"$tmp/res-ref-flac5-$1"
  printf "| WAV → FLAC | flac -5 | %s | %.2f | %.1f | - | %.2f | %s | %s | %.1f |\n" "$1" "$(hpm "$2")" \
    "$(echo "$wav_bytes / 1000000 / $2" | bc -l)" "$2" "$c" "$h" "$(echo "$mb / 1000000" | bc -l)" >>"$table"
}
mkdir -p "$tmp/f1" "$tmp/f2"
t0=$(date +%s.%N); timed flac -5 -s -f --output-prefix="$tmp/f1/" "${wavs[@]}"; t1=$(date +%s.%N)
flac_row 1 "$(echo "$t1 - $t0" | bc -l)" "$tmp/f1"
t0=$(date +%s.%N)
printf '%s\0' "${wavs[@]}" | timed xargs -0 -P2 -n 20 flac -5 -s -f --output-prefix="$tmp/f2/"
t1=$(date +%s.%N)
flac_row 2 "$(echo "$t1 - $t0" | bc -l)" "$tmp/f2"

# Size: our FLAC payloads vs flac -5's files (which carry a seek table, a vendor comment and
# 8 KiB of padding each), and vs those files without their PADDING blocks.
ref=$(du -sb "$tmp/f1" | cut -f1)
pad=0
if command -v metaflac >/dev/null; then
  pad=$(find "$tmp/f1" -name '*.flac' -exec metaflac --list --no-filename --block-type=PADDING {} + |
    awk '/length:/ {s += $2 + 4} END {print s + 0}')
fi
{
  echo
  printf "WAV → FLAC size: ours %.1f MB = %.4f of flac -5's files (%.1f MB), %.4f of them without padding (%.1f MB); PCM is %.1f MB (ours = %.3f of PCM, flac -5 = %.3f).\n" \
    "$(echo "$ours / 1000000" | bc -l)" "$(echo "$ours / $ref" | bc -l)" "$(echo "$ref / 1000000" | bc -l)" \
    "$(echo "$ours / ($ref - $pad)" | bc -l)" "$(echo "($ref - $pad) / 1000000" | bc -l)" \
    "$(echo "($wav_bytes - 44 * $nfiles) / 1000000" | bc -l)" "$(echo "$ours / ($wav_bytes - 44 * $nfiles)" | bc -l)" \
    "$(echo "($ref - $pad) / ($wav_bytes - 44 * $nfiles)" | bc -l)"
  # Same-run ratios: ours / reference, in CPU seconds (lower is better for us) and in wall
  # seconds (sensitive to other load on the machine).
  ratio() { # ours-file ref-file field
    local a b
    a=$(cut -d' ' -f"$3" "$1"); b=$(cut -d' ' -f"$3" "$2")
    if [ "$a" = - ] || [ "$b" = - ]; then echo -; else printf %.2f "$(echo "$a / $b" | bc -l)"; fi
  }
  echo
  for w in 1 2; do
    printf "FLAC pass-through vs flac -t, %s worker(s)/process(es): CPU seconds ours/flac = %s, wall seconds ours/flac = %s.\n" \
      "$w" "$(ratio "$tmp/res-flac-flac-$w" "$tmp/res-ref-flact-$w" 1)" "$(ratio "$tmp/res-flac-flac-$w" "$tmp/res-ref-flact-$w" 2)"
  done
  for w in 1 2; do
    printf "WAV → FLAC vs flac -5, %s worker(s)/process(es): CPU seconds ours/flac = %s, wall seconds ours/flac = %s.\n" \
      "$w" "$(ratio "$tmp/res-flac-wav-$w" "$tmp/res-ref-flac5-$w" 1)" "$(ratio "$tmp/res-flac-wav-$w" "$tmp/res-ref-flac5-$w" 2)"
  done
  printf "Machine: %s, %s cores. Load average at end: %s.\n" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')" \
    "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
} >>"$table"
cat "$table"
