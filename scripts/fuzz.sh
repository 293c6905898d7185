#!/bin/bash
# Coverage-guided fuzzing with libFuzzer under ASan and UBSan: builds the
# fuzz targets (tests/fuzz/) with Clang in ./build-fuzz and runs each for
# SECONDS (default 60), starting from tests/fuzz/corpus/<target> plus what
# earlier runs found (build-fuzz/corpus/<target>).  A failing input is
# written to build-fuzz/crash-* and reproduced by
#   build-fuzz/tests/fuzz/fuzz_<target>_libfuzzer build-fuzz/crash-...
# Usage: scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
# (-fno-sanitize=function: Clang 14 cannot emit that check's prologue data
# for the split functions of C++20 coroutines, "Cannot represent a
# difference across sections"; the analysis' replay is coroutines.)
san="-fsanitize=address,undefined -fno-sanitize=function -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
      -DCMAKE_C_FLAGS="$san" -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link $san" \
      -DONLINEWS_BUILD_BENCHMARKS=OFF -DONLINEWS_BUILD_EXAMPLES=OFF > /dev/null
cmake --build build-fuzz -j "$(nproc)" --target fuzz_config_libfuzzer fuzz_replay_libfuzzer > /dev/null
rc=0
for t in config replay; do
  mkdir -p "build-fuzz/corpus/$t"
  echo "== fuzz_$t: ${seconds} s"
  (cd build-fuzz && "tests/fuzz/fuzz_${t}_libfuzzer" -max_total_time="$seconds" -print_final_stats=1 \
      "corpus/$t" "../tests/fuzz/corpus/$t" 2>&1 | grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units|==[0-9]+==ERROR|SUMMARY|fuzz_)|Test unit written|BINGO" || true)
  [ -z "$(ls build-fuzz/crash-* build-fuzz/timeout-* build-fuzz/leak-* build-fuzz/oom-* 2>/dev/null)" ] || { echo "fuzz_$t: failing input kept in build-fuzz/"; rc=1; }
done
exit "$rc"
