#!/usr/bin/env bash
# ctest count_plugin_selftest: runs tests/count_selftest.cpp's firmware under scripts/cm4-count
# and checks the insn_count plugin's log against the counts the firmware states ("count-expect:",
# exact, phase 0) and its last interval (phase 1, the only one) against SysTick under -icount
# shift=0 ("count-systick:", 40 instructions per tick: within one tick plus the two ticks() reads
# in the window, 100 in all).
# Negative controls: the same check on the intervals from each stop marker to the next start
# must fail, and a start marker that is not `bx lr` (main) must be refused with exit status 3.
set -euo pipefail
elf=${1:?usage: count-selftest.sh count_selftest.elf}
root=$(cd "$(dirname "$0")/../../.." && pwd)
count="$root/scripts/cm4-count"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# check LOG OUTPUT: 0 when the log matches the stated counts.
check() {
  local expect systick
  expect=$(sed -n 's/^count-expect: //p' "$2")
  systick=$(sed -n 's/^count-systick: //p' "$2")
  [ -n "$expect" ] && [ -n "$systick" ] || { echo "no count-expect/count-systick line"; return 1; }
  local got
  got=$(head -n "$(wc -w <<<"$expect")" "$1" | paste -sd' ')
  if [ "$got" != "$expect" ]; then
    echo "exact intervals: expected '$expect', plugin counted '$got'"
    return 1
  fi
  local last
  last=$(tail -n 1 "$1")
  if ! awk -v a="$last" -v b="$systick" 'BEGIN { d = a - b; exit !(d <= 100 && d >= -100) }'; then
    echo "long interval: plugin $last, SysTick x 40 = $systick (tolerance 100)"
    return 1
  fi
  echo "exact intervals '$got' as stated; long interval: plugin $last, SysTick x 40 = $systick"
}

"$count" --log "$tmp/log" "$elf" >"$tmp/out"
cat "$tmp/out"
check "$tmp/log" "$tmp/out"
grep -q '^insn_count: phase=1 intervals=1 ' "$tmp/out" && grep -qx '# phase 1' "$tmp/log" ||
  { echo "phase 1 (one interval) missing from the summary or the log"; exit 1; }

# Negative control 1: stop->start intervals (markers swapped) must not pass the check.
"$count" --start sgmcmc_count_stop --stop sgmcmc_count_start --log "$tmp/swapped" "$elf" \
  >"$tmp/out2" || true
if check "$tmp/swapped" "$tmp/out" >/dev/null; then
  echo "negative control: swapped markers passed the check" >&2
  exit 1
fi
echo "negative control: swapped markers fail the check, as they must"

# Negative control 2: a marker whose first instruction is not bx lr is reported (exit 3).
status=0
"$count" --start main --log "$tmp/bad" "$elf" >"$tmp/out3" || status=$?
if [ "$status" -ne 3 ] || ! grep -q 'bad_marker=1' "$tmp/out3"; then
  echo "negative control: a non-bx-lr marker was not refused (status $status)" >&2
  exit 1
fi
echo "negative control: a marker that is not bx lr is refused (exit 3)"
