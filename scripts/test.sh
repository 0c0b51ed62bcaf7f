#!/usr/bin/env bash
# From a fresh Debian 12 machine: install, build, and run every test that
# needs no GPU (README command 2; CI runs this). The lit suite covers the
# dialect, passes, PTX assembled by ptxas, the installed package, the
# mlir-opt plugin and the C API; pytest covers the Python runtime and the
# GPU test cases' references. GPU tests run on a GPU machine through
# scripts/gpu-check.sh.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${KGRAPH_BUILD_DIR:-$root/build}
"$root/scripts/install-deps.sh" || exit 1
"$root/scripts/build.sh" || exit 1

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

echo
echo "lit: $lit_pass passed, $lit_fail failed; pytest: $py_pass passed, $py_fail failed, $py_skip skipped"
echo "$((lit_pass + py_pass)) passed, $((lit_fail + py_fail)) failed, $py_skip skipped"
[ $((lit_pass + py_pass)) -gt 0 ] || status=1
exit $status
