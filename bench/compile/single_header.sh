#!/usr/bin/env bash
# Compile-time and memory budget of the single headers (README, "Compiler Explorer"): builds the
# README's example and examples/compiler_explorer/*.cpp against single_include/ the way Compiler
# Explorer does (Eigen and range-v3 include paths, no link flags) and prints one markdown row per
# compiler, flags and program: wall seconds, user CPU seconds and the compiler's peak memory,
# from /usr/bin/time -v. Compiler Explorer stops at about 20 s and 1.25 GiB; our budget on the
# 2-core development machine is 8 s and 1 GiB for the core header, 15 s for all.hpp.
# Usage: bench/compile/single_header.sh [compiler...]   (default: g++ clang++-16)
#        FLAGS="-O0;-O2" (default) picks the optimisation levels, ';'-separated.
set -euo pipefail
cd "$(dirname "$0")/../.."
compilers=("$@")
[ ${#compilers[@]} -eq 0 ] && compilers=(g++ clang++-16)
IFS=';' read -r -a levels <<< "${FLAGS:--O0;-O2}"
programs=(examples/linear_model/main.cpp examples/compiler_explorer/tensor_tape.cpp
          examples/compiler_explorer/function_quiz.cpp examples/compiler_explorer/keras_model.cpp
          examples/compiler_explorer/tfrecord_memory.cpp)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| compiler | flags | program | header | wall s | user s | max RSS MiB |"
echo "|---|---|---|---|---|---|---|"
for cxx in "${compilers[@]}"; do
  version=$("$cxx" -dumpversion)
  for level in "${levels[@]}"; do
    for program in "${programs[@]}"; do
      header=$(grep -o '#include <tapeflow/[a-z]*\.hpp>' "$program" | head -1 | sed 's/.*<tapeflow\/\(.*\)>/\1/')
      /usr/bin/time -v -o "$tmp/time" "$cxx" -std=c++20 "$level" -I single_include \
        -isystem /usr/include/eigen3 "$program" -o "$tmp/a.out"
      "$tmp/a.out" > /dev/null  # it must also run
      wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0;
        for (i = 1; i <= n; i++) s = s * 60 + p[i]; printf "%.1f", s }' "$tmp/time")
      user=$(awk -F': ' '/User time/ { printf "%.1f", $2 }' "$tmp/time")
      rss=$(awk -F': ' '/Maximum resident/ { printf "%.0f", $2 / 1024 }' "$tmp/time")
      echo "| $cxx $version | $level | ${program#examples/} | $header | $wall | $user | $rss |"
    done
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
