#!/usr/bin/env bash
# From a fresh Debian 12 machine: install, build, and run every test that
# needs no GPU (README command 2; CI runs this). The lit suite covers the
# dialect, passes, PTX assembled by ptxas, the installed package, the
# mlir-opt plugin and the C API; pytest covers the Python runtime and the
# GPU test cases' references; a short seeded random-graph fuzz run
# (run_fuzz, about two minutes) drives the whole pipeline, and a seeded run
# of small random graphs through the CPU kernel interpreter (about a minute
# and a half) checks the values their kernels compute. GPU tests run on a
# GPU machine through scripts/gpu-check.sh.
#
# Then a second build, with Debian's default compiler (g++) and
# AddressSanitizer + UndefinedBehaviorSanitizer, in
# ${KGRAPH_SANITIZER_BUILD_DIR:-build-gcc-asan}, runs the whole lit suite and
# the short fuzz run again: code that depends on one compiler (e.g. on the
# order function arguments are evaluated in) or misuses memory fails there.
# KGRAPH_SANITIZER_BUILD=0 leaves it out (quicker local runs; CI keeps it).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${KGRAPH_BUILD_DIR:-$root/build}
sbuild=${KGRAPH_SANITIZER_BUILD_DIR:-$root/build-gcc-asan}
"$root/scripts/install-deps.sh" || exit 1
# Without ptxas the PTX checks (REQUIRES: ptxas) would be UNSUPPORTED and the
# run green: refuse, unless the caller opts out, loudly.
if [ -x /usr/local/cuda/bin/ptxas ] || command -v ptxas >/dev/null; then
  have_ptxas=1
else
  have_ptxas=0
  if [ "${KGRAPH_ALLOW_NO_PTXAS:-0}" != 1 ]; then
    echo "kgraph: error: no ptxas: the tests that assemble the emitted PTX cannot run" \
         "(see the message above; KGRAPH_ALLOW_NO_PTXAS=1 runs without them)" >&2
    exit 1
  fi
  echo "########################################################################"
  echo "# WARNING: KGRAPH_ALLOW_NO_PTXAS=1: no ptxas, the PTX checks do not run #"
  echo "########################################################################"
fi
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
lit_pass=0
lit_fail=0
lit_unsupported=0
lit_summary=
# run_lit BUILD LABEL: the whole lit suite of BUILD, its log in BUILD/lit.log;
# adds to lit_pass / lit_fail / lit_unsupported. Unsupported tests are listed;
# one that needs ptxas fails the run unless KGRAPH_ALLOW_NO_PTXAS=1.
run_lit() {
  local log=$1/lit.log
  echo "== lit ($2)"
  /usr/lib/llvm-22/bin/lit -v "$1/test" 2>&1 | tee "$log" | grep -Ev '^(PASS|UNSUPPORTED):'
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  local pass fail unsup needs_ptxas=0 t
  pass=$(grep -cE '^PASS:' "$log")
  fail=$(grep -cE '^(FAIL|XPASS|UNRESOLVED|TIMEOUT):' "$log")
  unsup=$(grep -cE '^UNSUPPORTED:' "$log")
  while read -r t; do
    [ -n "$t" ] || continue
    echo "  unsupported: $t"
    grep -qE 'REQUIRES:.*ptxas' "$root/test/$t" 2>/dev/null && needs_ptxas=$((needs_ptxas + 1))
  done < <(sed -nE 's/^UNSUPPORTED: [^:]+ :: (.*) \([0-9]+ of [0-9]+\)$/\1/p' "$log")
  if [ "$needs_ptxas" -gt 0 ]; then
    if [ "${KGRAPH_ALLOW_NO_PTXAS:-0}" = 1 ]; then
      echo "  WARNING: $needs_ptxas test(s) needing ptxas did not run (KGRAPH_ALLOW_NO_PTXAS=1)"
    else
      echo "  error: $needs_ptxas test(s) needing ptxas did not run"
      status=1
      fail=$((fail + needs_ptxas))
    fi
  fi
  lit_pass=$((lit_pass + pass))
  lit_fail=$((lit_fail + fail))
  lit_unsupported=$((lit_unsupported + unsup))
  lit_summary+="lit ($2): $pass passed, $fail failed, $unsup unsupported; "
}

run_lit "$build" "clang"

py_log=$build/pytest.log
# The importer tests compile with this build's tools (kgraph.tools.find_tool).
( cd "$root" && PYTHONPATH="$root/python" KGRAPH_OPT="$build/bin/kgraph-opt" \
    KGRAPH_TRANSLATE="$build/bin/kgraph-translate" /usr/bin/python3 -m pytest -q -p no:cacheprovider \
    -rs python/tests test/GPU ) 2>&1 | tee "$py_log" | grep -vE '^SKIPPED \[' | tail -n 15
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
py_pass=$(grep -oE '[0-9]+ passed' "$py_log" | tail -1 | grep -oE '[0-9]+' || echo 0)
py_fail=$(grep -oE '[0-9]+ (failed|error)' "$py_log" | awk '{s+=$1} END {print s+0}')
py_skip=$(grep -oE '[0-9]+ skipped' "$py_log" | tail -1 | grep -oE '[0-9]+' || echo 0)
# Why pytest skipped (the -rs lines, one per reason): printed, and a skip for
# a missing ptxas fails the run like the lit tests' unless allowed.
echo "pytest skipped, by reason:"
grep -E '^SKIPPED \[' "$py_log" | sed -E 's/^SKIPPED \[([0-9]+)\] [^:]+(:[0-9]+)?: /\1 /' |
  awk '{n = $1; sub(/^[0-9]+ /, ""); c[$0] += n} END {for (r in c) printf "  %d x %s\n", c[r], r}' |
  sort -k1,1nr | head -n 20
py_skip_ptxas=$(grep -E '^SKIPPED \[' "$py_log" | grep -i ptxas |
  sed -E 's/^SKIPPED \[([0-9]+)\].*/\1/' | awk '{s+=$1} END {print s+0}')
if [ "$py_skip_ptxas" -gt 0 ] && [ "${KGRAPH_ALLOW_NO_PTXAS:-0}" != 1 ]; then
  echo "error: $py_skip_ptxas pytest test(s) needing ptxas were skipped"
  status=1
  py_fail=$((py_fail + py_skip_ptxas))
fi

fuzz_pass=0; fuzz_fail=0; fuzz_lines=
# fuzz_in BUILD LABEL: the short fuzz run against BUILD's kgraph-opt, its log
# in BUILD/fuzz.log; counts as one test, passed without a finding.
fuzz_in() {
  local log=$1/fuzz.log line rc
  echo "== fuzz ($2)"
  run_fuzz "$1/bin/kgraph-opt" "$log" | grep -E "^(fuzz:|FINDING|  saved:)"
  rc=${PIPESTATUS[0]}
  line=$(grep -E '^fuzz: seed .* graphs, [0-9]+ findings' "$log" | tail -1)
  if [ "$rc" -eq 0 ] && [ -n "$line" ]; then
    fuzz_pass=$((fuzz_pass + 1))
  else
    fuzz_fail=$((fuzz_fail + 1)); status=1
  fi
  fuzz_lines+="${line:-fuzz: no result (see $log)} ($2)"$'\n'
}
fuzz_in "$build" "clang"

# The seeded run of the kernel interpreter (test/Tools/check_kernels_interp.py
# --fuzz): small random graphs compiled with and without --fuse, their
# kernels run on the CPU against graphgen's float64 reference, for
# $KGRAPH_INTERP_FUZZ_SECONDS (default 90) on 2 workers, a new seed each run unless
# KGRAPH_INTERP_FUZZ_SEED is set (printed first); counts as one test.
echo "== interpreter fuzz (clang)"
interp_log=$build/interp-fuzz.log
interp_seed=()
[ -n "${KGRAPH_INTERP_FUZZ_SEED:-}" ] && interp_seed=(--seed "$KGRAPH_INTERP_FUZZ_SEED")
/usr/bin/python3 "$root/test/Tools/check_kernels_interp.py" "$build/bin/kgraph-opt" \
    --fuzz 600 --workers 2 "${interp_seed[@]}" --time "${KGRAPH_INTERP_FUZZ_SECONDS:-90}" 2>&1 |
  tee "$interp_log" | grep -vE '^(ok|same|rejected) '
if [ "${PIPESTATUS[0]}" -eq 0 ]; then
  fuzz_pass=$((fuzz_pass + 1))
else
  fuzz_fail=$((fuzz_fail + 1)); status=1
fi
fuzz_lines+="$(grep -E '^interp fuzz:' "$interp_log" | head -1); $(grep -E '^interp: ' "$interp_log" | tail -1)"$'\n'

# The g++ + ASan/UBSan build. ASAN_OPTIONS/UBSAN_OPTIONS defaults (abort on
# the first report, leak checking on) are set by test/lit.cfg.py and, for the
# fuzz run, below.
if [ "${KGRAPH_SANITIZER_BUILD:-1}" != 0 ]; then
  echo "== g++ + AddressSanitizer + UndefinedBehaviorSanitizer build in $sbuild"
  if KGRAPH_BUILD_DIR=$sbuild KGRAPH_COMPILER=gcc KGRAPH_SANITIZE=address,undefined \
      "$root/scripts/build.sh"; then
    run_lit "$sbuild" "g++, ASan + UBSan"
    ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:allow_user_poisoning=0} \
    UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1} \
      fuzz_in "$sbuild" "g++, ASan + UBSan"
  else
    echo "g++ + sanitizer build failed"
    status=1
    lit_fail=$((lit_fail + 1))
    lit_summary+="g++ + sanitizer build: failed; "
  fi
fi

echo
echo "${lit_summary}pytest: $py_pass passed, $py_fail failed, $py_skip skipped"
printf '%s' "$fuzz_lines"
[ "$have_ptxas" = 1 ] || echo "WARNING: no ptxas (KGRAPH_ALLOW_NO_PTXAS=1): the PTX checks did not run"
echo "$((lit_pass + py_pass + fuzz_pass)) passed, $((lit_fail + py_fail + fuzz_fail)) failed, $((lit_unsupported + py_skip)) skipped or unsupported"
[ $((lit_pass + py_pass)) -gt 0 ] || status=1
exit $status
