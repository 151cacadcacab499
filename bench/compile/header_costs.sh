#!/usr/bin/env bash
# Per-header compile cost: compiles a translation unit that only includes one header (run.sh's
# flags, to an object file) and prints the CPU seconds (user + sys), most expensive first, next
# to an empty TU's. CPU time rather than wall time, so a busy machine skews it less.
# Usage: bench/compile/header_costs.sh [top (default 10)] [header ...]
#        headers as tapeflow/<path>.hpp; default: every header under include/tapeflow outside
#        detail/ folders.   env: CXX (default g++)
set -euo pipefail
cd "$(dirname "$0")/../.."
top=${1:-10}
shift || true
cxx=${CXX:-g++}
flags=(-std=c++20 -O2 -march=native -I include -isystem /usr/include/eigen3 -c)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ $# -gt 0 ]; then
  headers=("$@")
else
  mapfile -t headers < <(cd include && find tapeflow -name '*.hpp' -not -path '*/detail/*' | sort)
fi
cpu_seconds() {  # user+sys seconds of compiling $1
  /usr/bin/time -f '%U %S' -o "$tmp/time" "$cxx" "${flags[@]}" "$1" -o "$tmp/out.o"
  awk '{ printf "%.2f\n", $1 + $2 }' "$tmp/time"
}
echo '' >"$tmp/empty.cpp"
echo "$cxx ${flags[*]} <one #include>; empty TU: $(cpu_seconds "$tmp/empty.cpp") s CPU"
for h in "${headers[@]}"; do
  echo "#include <$h>" >"$tmp/one.cpp"
  echo "$(cpu_seconds "$tmp/one.cpp") $h"
done | sort -rn | head -n "$top" | awk '{ printf "%6.2f s  %s\n", $1, $2 }'
