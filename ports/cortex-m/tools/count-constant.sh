#!/usr/bin/env bash
# ctest count_constant_<opt>: runs tests/count_rt.cpp's firmware under scripts/cm4-count and
# prints a markdown table of instructions per call (min / median / max over 10^4 calls per
# phase, and per value for the fills). Fails unless every phase the firmware calls "constant"
# has min = max, and every phase it calls "varies" (newlib's functions and the portable
# Box-Muller, the negative controls: the check can see a varying count) has min < max.
#   count-constant.sh fw.elf [--table]     (--table: print only the table)
set -euo pipefail
elf=${1:?usage: count-constant.sh count_rt.elf [--table]}
root=$(cd "$(dirname "$0")/../../.." && pwd)
out=$("$root/scripts/cm4-count" "$elf")
[ "${2:-}" = "--table" ] || echo "$out"
awk -v table_only="${2:-}" '
  /^count-phase / {
    p = $2; kind[p] = $3; $1 = $2 = $3 = ""; sub(/^ +/, ""); label[p] = $0; n++
  }
  /^insn_count: phase=/ {
    split($0, f, /[ =]/)
    for (i = 1; i < length(f); i++) v[f[i]] = f[i + 1]
    p = v["phase"]; lo[p] = v["min"]; mid[p] = v["median"]; hi[p] = v["max"]; seen[p] = 1
  }
  END {
    bad = 0
    print ""
    print "| phase | what | min | median | max | median per value |"
    print "|---:|---|---:|---:|---:|---:|"
    for (p = 1; p <= n; p++) {
      per = "";
      if (match(label[p], /n = [0-9]+/)) per = sprintf("%.1f", mid[p] / substr(label[p], RSTART + 4, RLENGTH - 4))
      else if (match(label[p], /, 8>/)) per = sprintf("%.1f", mid[p] / 8)
      printf "| %d | %s | %s | %s | %s | %s |\n", p, label[p], lo[p], mid[p], hi[p], per
      if (!seen[p]) { msg = msg "phase " p " has no intervals\n"; bad = 1; continue }
      if (kind[p] == "constant" && lo[p] != hi[p]) { msg = msg "phase " p " (" label[p] ") is not constant\n"; bad = 1 }
      if (kind[p] == "varies" && lo[p] == hi[p]) { msg = msg "negative control: phase " p " (" label[p] ") did not vary\n"; bad = 1 }
    }
    if (n == 0) { msg = "no count-phase lines\n"; bad = 1 }
    if (table_only != "--table") printf "\n%s%s\n", msg, bad ? "FAILED" : "constant phases constant, varying phases varying"
    exit bad
  }' <<<"$out"
