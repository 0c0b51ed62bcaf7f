#!/usr/bin/env bash
# The whole GPU check in one call, run on the GPU machine from the repo root:
#
#   scripts/gpu-check.sh [CASES_DIR]        (default .gpu)
#
# CASES_DIR holds what scripts/build-gpu-cases.py wrote (manifest.json, the
# .mlir/.ptx/.plan.json of every case); build it here-less machines can't.
# Steps: GPU identity; the correctness tests (test/GPU); the same tests under
# compute-sanitizer memcheck (the representative subset the manifest marks,
# KGRAPH_MEMCHECK_SUBSET=all for every case); the benchmark; a summary table,
# printed last. Exits non-zero if any step failed. Logs and JSON go to
# $OUT (if set) or a fresh temporary folder.
#
# Environment: KGRAPH_TEST_SEED (reuse a seed), KGRAPH_MEMCHECK_SUBSET
# (memcheck|all), KGRAPH_SKIP_MEMCHECK=1, KGRAPH_SKIP_BENCH=1.
set -u -o pipefail

CASES=$(cd "${1:-.gpu}" 2>/dev/null && pwd) || {
  echo "gpu-check: no cases folder '${1:-.gpu}' (build it with scripts/build-gpu-cases.py)" >&2
  exit 2
}
if [ ! -f "$CASES/manifest.json" ]; then
  echo "gpu-check: $CASES/manifest.json is missing" >&2
  exit 2
fi
LOGS=${OUT:-$(mktemp -d /tmp/kgraph-gpu-check.XXXXXX)}
mkdir -p "$LOGS"
PY=${PYTHON:-python3}
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
export KGRAPH_GPU_CASES="$CASES/manifest.json"
export KGRAPH_TEST_SEED=${KGRAPH_TEST_SEED:-$($PY -c 'import random; print(random.SystemRandom().randrange(2**31))')}
SUBSET=${KGRAPH_MEMCHECK_SUBSET:-memcheck}

echo "== GPU"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,compute_cap \
  --format=csv,noheader 2>&1 | head -n 4
echo "cases: $CASES   seed: $KGRAPH_TEST_SEED   logs: $LOGS"

# pytest_counts JUNIT -> "passed failed skipped" of the GPU tests
# (test_elementwise.py); failures anywhere else count as failed too.
pytest_counts() {
  $PY - "$1" <<'PYEOF'
import sys, xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except Exception:
    print("0 1 0"); sys.exit()
p = f = s = 0
for tc in root.iter("testcase"):
    gpu = "test_elementwise" in tc.get("classname", "")
    if tc.find("failure") is not None or tc.find("error") is not None:
        f += 1
    elif tc.find("skipped") is not None:
        s += gpu
    else:
        p += gpu
print(p, f, s)
PYEOF
}

echo
echo "== correctness tests (pytest test/GPU)"
start=$SECONDS
$PY -m pytest test/GPU -q -rfEs -p no:cacheprovider --junitxml="$LOGS/tests.xml" \
  2>&1 | tee "$LOGS/tests.log" | tail -n 40
tests_rc=$?
read -r t_pass t_fail t_skip < <(pytest_counts "$LOGS/tests.xml")
tests_time=$((SECONDS - start))

mc_status="skipped"; mc_errors="-"; mc_rc=0; mc_time=0
if [ "${KGRAPH_SKIP_MEMCHECK:-0}" != 1 ]; then
  echo
  echo "== compute-sanitizer memcheck over test/GPU (subset: $SUBSET)"
  start=$SECONDS
  # No caching allocator: every tensor is its own cudaMalloc, so memcheck sees
  # exact buffer bounds (with caching, an overrun lands in the same segment).
  PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck \
    --error-exitcode 99 --print-limit 50 \
    $PY -m pytest test/GPU/test_elementwise.py -q -p no:cacheprovider \
    --kgraph-subset="$SUBSET" --junitxml="$LOGS/memcheck.xml" \
    > "$LOGS/memcheck.log" 2>&1
  mc_rc=$?
  mc_time=$((SECONDS - start))
  grep -E "ERROR SUMMARY|Invalid|passed|failed" "$LOGS/memcheck.log" | tail -n 20
  grep -q "ERROR SUMMARY" "$LOGS/memcheck.log" || tail -n 5 "$LOGS/memcheck.log"
  mc_errors=$(grep -oE "ERROR SUMMARY: [0-9]+" "$LOGS/memcheck.log" | tail -n 1 | grep -oE "[0-9]+$")
  mc_errors=${mc_errors:-"?"}
  read -r m_pass m_fail m_skip < <(pytest_counts "$LOGS/memcheck.xml")
  mc_status="$m_pass passed, $m_fail failed, $m_skip skipped"
  if [ "$m_pass" -eq 0 ] && [ $mc_rc -eq 0 ]; then mc_rc=1; fi  # nothing ran
fi

bench_rc=0; bench_line="skipped"
if [ "${KGRAPH_SKIP_BENCH:-0}" != 1 ]; then
  echo
  echo "== benchmark (bench/bench_elementwise.py)"
  $PY bench/bench_elementwise.py --cases "$CASES" --json "$LOGS/bench_elementwise.json" \
    2>&1 | tee "$LOGS/bench.log"
  bench_rc=$?
  if [ $bench_rc -eq 0 ]; then
    bench_line=$($PY - "$LOGS/bench_elementwise.json" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"add {r['add_frac_copy']:.1%} of copy, {r['add_vs_torch']:.2f}x torch; "
      f"exp {r['exp_frac_copy']:.1%} of copy, {r['exp_vs_torch']:.2f}x torch")
PYEOF
)
  else
    bench_line="FAILED (see $LOGS/bench.log)"
  fi
fi

fail=0
[ $tests_rc -ne 0 ] && fail=1
[ "${t_fail:-1}" -ne 0 ] && fail=1
# On the GPU machine a skipped GPU test (no GPU, no manifest) is a failure.
[ "${t_pass:-0}" -eq 0 ] && fail=1
[ "${t_skip:-0}" -ne 0 ] && fail=1
[ $mc_rc -ne 0 ] && fail=1
[ $bench_rc -ne 0 ] && fail=1

echo
echo "================ kgraph GPU check summary ================"
printf "%-12s %s\n" "tests" "GPU tests: $t_pass passed, $t_skip skipped; failed (any test): $t_fail (${tests_time}s, seed $KGRAPH_TEST_SEED)"
printf "%-12s %s\n" "memcheck" "errors: $mc_errors; tests: $mc_status; exit $mc_rc (${mc_time}s, subset $SUBSET)"
printf "%-12s %s\n" "bench" "$bench_line"
printf "%-12s %s\n" "logs" "$LOGS"
printf "%-12s %s\n" "result" "$([ $fail -eq 0 ] && echo PASS || echo FAIL)"
exit $fail
