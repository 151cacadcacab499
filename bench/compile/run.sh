#!/usr/bin/env bash
# Times compiling bench/compile/umbrella_30_lines.cpp (include the umbrella + build a small program)
# and prints the median wall-clock seconds. No CMake needed.
# Usage: bench/compile/run.sh [runs (default 5)]    env: CXX (default g++)
#        PRECOMPILED=<build>/libtapeflow_instantiations.a bench/compile/run.sh   the same program
#        compiled with TAPEFLOW_PRECOMPILED and linked with tapeflow::instantiations (MAINTAINERS.md)
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-5}
cxx=${CXX:-g++}
cmd=("$cxx" -std=c++20 -O2 -march=native -I include -isystem /usr/include/eigen3
     bench/compile/umbrella_30_lines.cpp)
if [ -n "${PRECOMPILED:-}" ]; then
  cmd=("${cmd[@]:0:1}" -DTAPEFLOW_PRECOMPILED "${cmd[@]:1}" "$PRECOMPILED" -pthread)
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "${cmd[*]} -o <tmp>  (x$runs after one warm-up)"
"${cmd[@]}" -o "$tmp/a.out"  # warm-up: fails loudly if the program does not compile
for ((i = 0; i < runs; i++)); do
  start=$(date +%s.%N)
  "${cmd[@]}" -o "$tmp/a.out"
  end=$(date +%s.%N)
  echo "$start $end" | awk '{ printf "%.3f\n", $2 - $1 }'
done | tee "$tmp/times"
sort -n "$tmp/times" | awk '{ t[NR] = $1 } END {
  m = (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
  printf "median: %.3f s over %d runs\n", m, NR }'
