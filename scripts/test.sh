#!/usr/bin/env bash
# From a fresh Debian 12 machine: install, build, and run every test that
# needs no GPU (README command 2; CI runs this). The lit suite covers the
# dialect, passes, PTX assembled by ptxas, the installed package, the
# mlir-opt plugin and the C API; pytest covers the Python runtime and the
# GPU test cases' references; a short seeded random-graph fuzz run
# (run_fuzz, about two minutes) drives the whole pipeline. GPU tests run on a
# GPU machine through scripts/gpu-check.sh.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${KGRAPH_BUILD_DIR:-$root/build}
"$root/scripts/install-deps.sh" || exit 1
"$root/scripts/build.sh" || exit 1

# run_fuzz KGRAPH_OPT [LOG]: the short seeded random-graph fuzz run
# (test/fuzz/kgraph_fuzz.py: verify, kgraph-opt with and without --fuse,
# ptxas) for $KGRAPH_FUZZ_SECONDS (default 120) on 2 workers, a new seed each
# run unless KGRAPH_FUZZ_SEED is set. Prints the seed and the count, keeps
# failing graphs under <build>/fuzz/findings, and ends with the line
# "fuzz: seed S: N graphs, F findings ..."; non-zero exit on a finding.
run_fuzz() {
  local opt=$1 log=${2:-$build/fuzz.log}
  local seed_arg=()
  [ -n "${KGRAPH_FUZZ_SEED:-}" ] && seed_arg=(--seed "$KGRAPH_FUZZ_SEED")
  /usr/bin/python3 "$root/test/fuzz/kgraph_fuzz.py" --opt "$opt" "${seed_arg[@]}" \
      --time "${KGRAPH_FUZZ_SECONDS:-120}" --workers 2 \
      --out "$(dirname "$log")/fuzz" 2>&1 | tee "$log"
  return "${PIPESTATUS[0]}"
}

status=0
lit_log=$build/lit.log
/usr/lib/llvm-22/bin/lit -v "$build/test" 2>&1 | tee "$lit_log" | grep -Ev '^(PASS|UNSUPPORTED):'
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
lit_pass=$(grep -cE '^PASS:' "$lit_log")
lit_fail=$(grep -cE '^(FAIL|XPASS|UNRESOLVED|TIMEOUT):' "$lit_log")

py_log=$build/pytest.log
( cd "$root" && PYTHONPATH="$root/python" /usr/bin/python3 -m pytest -q -p no:cacheprovider \
    python/tests test/GPU ) 2>&1 | tee "$py_log" | tail -n 15
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
py_pass=$(grep -oE '[0-9]+ passed' "$py_log" | tail -1 | grep -oE '[0-9]+' || echo 0)
py_fail=$(grep -oE '[0-9]+ (failed|error)' "$py_log" | awk '{s+=$1} END {print s+0}')
py_skip=$(grep -oE '[0-9]+ skipped' "$py_log" | tail -1 | grep -oE '[0-9]+' || echo 0)

fuzz_log=$build/fuzz.log
run_fuzz "$build/bin/kgraph-opt" "$fuzz_log" | grep -E "^(fuzz:|FINDING|  saved:)"
fuzz_rc=${PIPESTATUS[0]}
fuzz_line=$(grep -E '^fuzz: seed .* graphs, [0-9]+ findings' "$fuzz_log" | tail -1)
# The fuzz run counts as one test: passed without a finding.
fuzz_pass=0; fuzz_fail=0
if [ "$fuzz_rc" -eq 0 ] && [ -n "$fuzz_line" ]; then fuzz_pass=1; else fuzz_fail=1; status=1; fi

echo
echo "lit: $lit_pass passed, $lit_fail failed; pytest: $py_pass passed, $py_fail failed, $py_skip skipped"
echo "${fuzz_line:-fuzz: no result (see $fuzz_log)}"
echo "$((lit_pass + py_pass + fuzz_pass)) passed, $((lit_fail + py_fail + fuzz_fail)) failed, $py_skip skipped"
[ $((lit_pass + py_pass)) -gt 0 ] || status=1
exit $status
