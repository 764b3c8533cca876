#!/usr/bin/env bash
# Fails if any C++ file of the project differs from clang-format's output (.clang-format).
set -u
fmt=$1
root=$2
cd "$root" || exit 1
files=$(git ls-files '*.hpp' '*.cpp' '*.h' 2>/dev/null || find include src tests bench examples ports -name '*.[ch]pp')
[ -n "$files" ] || files=$(find include src tests bench examples ports -name '*.hpp' -o -name '*.cpp')
bad=0
for f in $files; do
  if ! "$fmt" --dry-run --Werror "$f" >/dev/null 2>&1; then
    echo "not clang-formatted: $f"
    bad=1
  fi
done
[ $bad -eq 0 ] && echo "all C++ files clang-formatted"
exit $bad
