#!/usr/bin/env bash
# The whole GPU check in one call, run on the GPU machine from the repo root:
#
#   scripts/gpu-check.sh [CASES_DIR]        (default .gpu)
#
# CASES_DIR holds what scripts/build-gpu-cases.py wrote (manifest.json, the
# .mlir/.ptx/.plan.json of every case); build it here-less machines can't.
# Steps: GPU identity; the correctness tests (test/GPU: elementwise, matmul,
# conv2d, fused graphs and the random graphs of the manifest's "fuzz" section); the same tests under compute-sanitizer memcheck (the
# representative subset the manifest marks, small shapes for matmul and
# conv2d; KGRAPH_MEMCHECK_SUBSET=all for every case); a sample of every
# suite built for sm_80, sm_75 and sm_70 and run on this GPU (needs
# KGRAPH_OPT); the benchmarks
# (elementwise; matmul against cuBLAS and conv2d against cuDNN, with the
# ptxas/SASS report of their kernels); a summary table, printed last. Exits non-zero if any step failed. Logs and
# JSON go to $OUT (if set) or a fresh temporary folder.
#
# Matmul and conv2d cases kgraph-opt has no code generation for yet ("unsupported" in
# the manifest) are skipped and counted in the summary, not failed;
# KGRAPH_STRICT=1 fails the check on them.
#
# Environment: KGRAPH_TEST_SEED (reuse a seed), KGRAPH_MEMCHECK_SUBSET
# (memcheck|all), KGRAPH_SKIP_MEMCHECK=1, KGRAPH_SKIP_BENCH=1,
# KGRAPH_SKIP_TESTS=1 (benchmarks only), KGRAPH_SKIP_TARGETS=1,
# KGRAPH_SKIP_VARIANTS=1 (leave out $CASES/variants, scripts/build-variant-sets.sh),
# KGRAPH_SKIP_MAIN_TESTS=1 (the sm_90a tests and memcheck skipped, the other
# targets run: with KGRAPH_SKIP_TARGETS=1 in the call before, the whole
# check in two device calls of at most 10 minutes),
# KGRAPH_BENCH_MATMUL_ARGS (extra arguments of bench/bench_matmul.py, e.g.
# "--kinds f16 --shapes ^4096"), KGRAPH_BENCH_CONV_ARGS (extra arguments of
# bench/bench_conv.py, e.g. "--kinds f16_nhwc"), KGRAPH_BENCH_GRAPHS_ARGS
# (e.g. "--filter chain --no-compile"), KGRAPH_STRICT=1,
# KGRAPH_ALLOW_STALE_CASES=1 (run a folder built from other sources: by
# default the check refuses it, scripts/case_digest.py), KGRAPH_TUNING_DB (a
# tuning database: bench_models also times ResNet-50 compiled with it; the
# benchmark cases' tuned builds come from scripts/build-tuned-cases.py).
set -u -o pipefail

CASES=$(cd "${1:-.gpu}" 2>/dev/null && pwd) || {
  echo "gpu-check: no cases folder '${1:-.gpu}' (build it with scripts/build-gpu-cases.py)" >&2
  exit 2
}
if [ ! -f "$CASES/manifest.json" ]; then
  echo "gpu-check: $CASES/manifest.json is missing" >&2
  exit 2
fi
# Cases built from other sources than this tree's test another compiler.
if ! ${PYTHON:-python3} "$PWD/scripts/case_digest.py" --check "$CASES"; then
  if [ "${KGRAPH_ALLOW_STALE_CASES:-0}" != 1 ]; then
    exit 2
  fi
  echo "WARNING: KGRAPH_ALLOW_STALE_CASES=1: running cases built from other sources"
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

# pytest_counts JUNIT -> "passed failed skipped unsupported mm_passed
# mm_failed cv_passed cv_failed gr_passed gr_failed fz_passed fz_failed" of
# the GPU tests (test_elementwise.py, test_matmul.py, test_conv.py,
# test_graphs.py, test_fuzz_graphs.py: the random graphs):
# "unsupported" are the matmul cases skipped because kgraph-opt has no code
# generation for them, "skipped" every other skip; failures anywhere count
# as failed too; mm_* are the matmul tests alone.
pytest_counts() {
  $PY - "$1" <<'PYEOF'
import sys, xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except Exception:
    print("0 1 0 0 0 1 0 1 0 1 0 1"); sys.exit()
p = f = s = u = mp = mf = cp = cf = gp = gf = zp = zf = 0
for tc in root.iter("testcase"):
    cls = tc.get("classname", "")
    mm = "test_matmul" in cls and "checker" not in cls and "bench" not in cls
    cv = "test_conv" in cls and "checker" not in cls
    gr = "test_graphs" in cls
    fz = "test_fuzz_graphs" in cls
    gpu = "test_elementwise" in cls or mm or cv or gr or fz
    skipped = tc.find("skipped")
    if tc.find("failure") is not None or tc.find("error") is not None:
        f += 1
        mf += mm
        cf += cv
        gf += gr
        zf += fz
    elif skipped is not None:
        if gpu and "unsupported by kgraph-opt" in (skipped.get("message") or ""):
            u += 1
        else:
            s += gpu
    else:
        p += gpu
        mp += mm
        cp += cv
        gp += gr
        zp += fz
print(p, f, s, u, mp, mf, cp, cf, gp, gf, zp, zf)
PYEOF
}

tests_rc=0; t_pass=0; t_fail=0; t_skip=0; t_unsup=0; t_mm_pass=0; t_mm_fail=0
t_cv_pass=0; t_cv_fail=0; t_gr_pass=0; t_gr_fail=0; t_fz_pass=0; t_fz_fail=0
fuzz_seed=-; tests_time=0
mc_status="skipped"; mc_errors="-"; mc_rc=0; mc_time=0
# KGRAPH_SKIP_TESTS=1: the benchmarks alone (a second call after a
# correctness-only one, KGRAPH_SKIP_BENCH=1, where one call is too short).
if [ "${KGRAPH_SKIP_TESTS:-0}" != 1 ] && [ "${KGRAPH_SKIP_MAIN_TESTS:-0}" != 1 ]; then
echo
echo "== correctness tests (pytest test/GPU)"
start=$SECONDS
$PY -m pytest test/GPU -q -rfEs -p no:cacheprovider --junitxml="$LOGS/tests.xml" \
  2>&1 | tee "$LOGS/tests.log" | tail -n 40
tests_rc=$?
read -r t_pass t_fail t_skip t_unsup t_mm_pass t_mm_fail t_cv_pass t_cv_fail t_gr_pass t_gr_fail t_fz_pass t_fz_fail < <(pytest_counts "$LOGS/tests.xml")
fuzz_seed=$($PY -c 'import json, sys; print(json.load(open(sys.argv[1])).get("fuzz_seed", "-"))' "$CASES/manifest.json" 2>/dev/null || echo -)
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
    $PY -m pytest test/GPU/test_elementwise.py test/GPU/test_matmul.py test/GPU/test_conv.py test/GPU/test_graphs.py -q -p no:cacheprovider \
    --kgraph-subset="$SUBSET" --junitxml="$LOGS/memcheck.xml" \
    > "$LOGS/memcheck.log" 2>&1
  mc_rc=$?
  mc_time=$((SECONDS - start))
  grep -E "ERROR SUMMARY|Invalid|passed|failed" "$LOGS/memcheck.log" | tail -n 20
  grep -q "ERROR SUMMARY" "$LOGS/memcheck.log" || tail -n 5 "$LOGS/memcheck.log"
  mc_errors=$(grep -oE "ERROR SUMMARY: [0-9]+" "$LOGS/memcheck.log" | tail -n 1 | grep -oE "[0-9]+$")
  mc_errors=${mc_errors:-"?"}
  read -r m_pass m_fail m_skip m_unsup m_mm_pass m_mm_fail m_cv_pass m_cv_fail m_gr_pass m_gr_fail m_fz_pass m_fz_fail < <(pytest_counts "$LOGS/memcheck.xml")
  mc_status="$m_pass passed ($m_mm_pass matmul, $m_cv_pass conv2d, $m_gr_pass graphs), $m_fail failed, $m_skip skipped, $m_unsup unsupported"
  if [ "$m_pass" -eq 0 ] && [ $mc_rc -eq 0 ]; then mc_rc=1; fi  # nothing ran
fi
fi  # KGRAPH_SKIP_TESTS

# bench_summary matmul|conv JSON SECONDS -> two lines: the summary of
# bench/bench_<name>.py's JSON (kgraph against cuBLAS/cuDNN, timed,
# unsupported and wrong cases) and its ptxas line.
bench_summary() {
  $PY - "$@" <<'PYEOF'
import json, sys
name, path, secs = sys.argv[1:4]
r = json.load(open(path))
if name == "matmul":
    ratios, title = r["ratio_4096"], "kgraph/cuBLAS at 4096^3: "
else:
    ratios, title = r["geomean_ratio"], "kgraph/cuDNN geomean (ResNet-50, batch 64): "
parts = [f"{k} {v:.2f}" if v else f"{k} -" for k, v in ratios.items()]
line = title + ", ".join(parts)
uns = sum(1 for s in r["skipped"] if s["status"] == "unsupported")
timed = sum(1 for x in r["rows"] if "error" not in x)
line += f"; {timed} timed, {uns} unsupported"
if r["wrong"]:
    line += f", WRONG: {' '.join(r['wrong'])}"
line += f" ({secs}s, {r['method']})"
print(line)
kern = ((r.get("ptxas") or {}).get("kernels") or {})
if name == "matmul":
    # ptxas of the 4096^3 kernels: registers, spills, and key SASS counts.
    ptx = []
    for case, k in sorted(kern.items()):
        if "_4096x4096x4096" not in case:
            continue
        kind = case.split("_")[2]
        if "error" in k:
            ptx.append(f"{kind}: ptxas failed")
            continue
        for fn, f in k["functions"].items():
            s = f"{kind} {f.get('registers')}r {f.get('spill_stores')}/{f.get('spill_loads')}sp"
            sass = f.get("sass")
            if sass:
                s += " " + " ".join(f"{op}{sass[op]}" for op in
                                    ("HMMA", "LDSM", "LDGSTS", "FFMA", "LDL", "STL")
                                    if sass[op])
            ptx.append(s)
    print("; ".join(ptx) or "-")
else:
    # Registers/spills of the f16 NHWC kernels: the worst one and the spillers.
    regs, spill = [], []
    for case, k in sorted(kern.items()):
        for fn, f in (k.get("functions") or {}).items():
            regs.append(f.get("registers") or 0)
            if f.get("spill_stores"):
                spill.append(case.replace("bench_conv_", ""))
    print((f"max {max(regs)} regs; spills in {len(spill)}: {' '.join(spill)}"
           if regs else "-"))
PYEOF
}

# gemm_bench NAME TITLE EXTRA_ARGS: runs bench/bench_NAME.py (matmul, conv)
# with its JSON and log in $LOGS; sets gb_rc (its exit code), gb_line and
# gb_ptxas (bench_summary's lines; "skipped" and "-" without a JSON).
gemm_bench() {
  local name=$1 title=$2 extra=$3 start secs
  echo
  echo "== $title (bench/bench_$name.py)"
  start=$SECONDS
  rm -f "$LOGS/bench_$name.json"
  # shellcheck disable=SC2086
  $PY "bench/bench_$name.py" --cases "$CASES" --json "$LOGS/bench_$name.json" \
    $extra 2>&1 | tee "$LOGS/bench_$name.log"
  gb_rc=$?
  secs=$((SECONDS - start))
  gb_line="skipped"; gb_ptxas="-"
  if [ -f "$LOGS/bench_$name.json" ]; then
    { read -r gb_line; read -r gb_ptxas; } < <(bench_summary "$name" "$LOGS/bench_$name.json" "$secs")
  fi
  [ $gb_rc -ne 0 ] && gb_line="FAILED (exit $gb_rc, see $LOGS/bench_$name.log): ${gb_line}"
}

# The other targets: this GPU also runs PTX built for sm_80, sm_75 and sm_70
# (the driver compiles it), so their mma.sync, synchronous-copy and SIMT
# paths are checked here too, on a sample of every suite that is built now
# with $KGRAPH_OPT (scripts/build-gpu-cases.py --sample). Skipped without
# KGRAPH_OPT or with KGRAPH_SKIP_TARGETS=1; KGRAPH_OTHER_TARGETS and
# KGRAPH_TARGET_SAMPLE (cases per manifest section, default 40) change it.
ot_rc=0; ot_lines=()
if [ -z "${KGRAPH_OPT:-}" ] || [ "${KGRAPH_SKIP_TARGETS:-0}" = 1 ] || [ "${KGRAPH_SKIP_TESTS:-0}" = 1 ]; then
  ot_lines=("skipped (KGRAPH_OPT unset, KGRAPH_SKIP_TARGETS=1 or KGRAPH_SKIP_TESTS=1)")
else
  for T in ${KGRAPH_OTHER_TARGETS:-sm_80 sm_75 sm_70}; do
    echo
    echo "== $T kernels on this GPU (a sample of every suite)"
    start=$SECONDS
    tdir="$LOGS/cases-$T"
    if ! $PY scripts/build-gpu-cases.py "$KGRAPH_OPT" "$tdir" --target "$T" --no-bench \
        --sample "${KGRAPH_TARGET_SAMPLE:-40}" --fuzz-count "${KGRAPH_TARGET_SAMPLE:-40}" \
        -j "$(nproc)" > "$LOGS/cases-$T.log" 2>&1; then
      ot_rc=1
      ot_lines+=("$T: building the cases FAILED (see $LOGS/cases-$T.log)")
      tail -n 5 "$LOGS/cases-$T.log"
      continue
    fi
    tail -n 1 "$LOGS/cases-$T.log"
    # test_call_returns_torch_on_device checks the runtime's call API on one
    # named case, which a sample may leave out (it ran with the main check).
    # Deselected by name: a --deselect node id depends on pytest's rootdir,
    # which differs between pytest versions in a tree without a config file.
    $PY -m pytest test/GPU/test_elementwise.py test/GPU/test_matmul.py test/GPU/test_conv.py \
      test/GPU/test_graphs.py test/GPU/test_fuzz_graphs.py -q -rfEs -p no:cacheprovider \
      -k "not test_call_returns_torch_on_device" \
      --kgraph-cases "$tdir" --junitxml="$LOGS/tests-$T.xml" > "$LOGS/tests-$T.log" 2>&1
    rc=$?
    tail -n 3 "$LOGS/tests-$T.log"
    read -r o_pass o_fail o_skip o_unsup o_rest < <(pytest_counts "$LOGS/tests-$T.xml")
    if [ $rc -ne 0 ] || [ "$o_pass" -eq 0 ] || [ "$o_skip" -ne 0 ]; then ot_rc=1; fi
    ot_lines+=("$T: $o_pass passed, $o_fail failed, $o_skip skipped, $o_unsup unsupported ($((SECONDS - start))s)")
  done
fi

bench_rc=0; bench_line="skipped"
gr_rc=0; gr_lines=("skipped")
tr_rc=0; tr_lines=("skipped")
va_rc=0; va_lines=()
mm_rc=0; mm_line="skipped"; mm_ptxas="-"
cv_rc=0; cv_line="skipped"; cv_ptxas="-"
md_lines=()
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

  echo
  echo "== transpose bandwidth against copy and torch (bench/bench_transpose.py)"
  rm -f "$LOGS/bench_transpose.json"
  $PY bench/bench_transpose.py --cases "$CASES" --json "$LOGS/bench_transpose.json" \
    2>&1 | tee "$LOGS/bench_transpose.log"
  tr_rc=${PIPESTATUS[0]}
  if [ -f "$LOGS/bench_transpose.json" ]; then
    mapfile -t tr_lines < <($PY - "$LOGS/bench_transpose.json" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
for x in r["rows"]:
    if "error" in x:
        print(f"{x['case']}: FAILED {x['error'][:80]}")
        continue
    print(f"{x['case'].replace('transpose_bench_', '')}: {x['frac_copy']:.1%} of copy "
          f"({x['kgraph_gbps']:.0f} GB/s), {x['vs_torch']:.2f}x torch permute"
          + ("" if x["meets_goal"] else " BELOW 85%") + (" WRONG" if "wrong" in x else ""))
PYEOF
)
  else
    tr_lines=("FAILED (see $LOGS/bench_transpose.log)")
  fi

  gemm_bench matmul "matmul benchmark against cuBLAS" "${KGRAPH_BENCH_MATMUL_ARGS:-}"
  mm_rc=$gb_rc; mm_line=$gb_line; mm_ptxas=$gb_ptxas

  gemm_bench conv "conv2d benchmark against cuDNN" "${KGRAPH_BENCH_CONV_ARGS:-}"
  cv_rc=$gb_rc; cv_line=$gb_line; cv_ptxas=$gb_ptxas

  echo
  echo "== fused graphs against torch eager and torch.compile (bench/bench_graphs.py)"
  start=$SECONDS
  rm -f "$LOGS/bench_graphs.json"
  # shellcheck disable=SC2086
  $PY bench/bench_graphs.py --cases "$CASES" --json "$LOGS/bench_graphs.json" \
    ${KGRAPH_BENCH_GRAPHS_ARGS:-} 2>&1 | tee "$LOGS/bench_graphs.log"
  gr_rc=$?
  gr_secs=$((SECONDS - start))
  if [ -f "$LOGS/bench_graphs.json" ]; then
    mapfile -t gr_lines < <($PY - "$LOGS/bench_graphs.json" "$gr_secs" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
for x in r["rows"]:
    if "error" in x:
        print(f"{x['case']}: FAILED {x['error'][:80]}")
        continue
    comp = f", {x['vs_compile']:.2f}x torch.compile" if "vs_compile" in x else ""
    print(f"{x['case']}: {x['kernels']} kernel(s), {x['kgraph_ms']:.3f} ms, "
          f"{x['vs_eager']:.2f}x eager{comp}, {x['frac_copy']:.0%} of copy"
          + (f" ({x['frac_copy_same']:.0%} of a same-size copy)"
             if "frac_copy_same" in x else "")
          + (" WRONG" if "wrong" in x else ""))
print(f"({sys.argv[2]}s, {r['method']})")
PYEOF
)
  fi

  # Configuration variants (scripts/build-variant-sets.sh, where the folder
  # was built): each set's default against its variants, outputs checked.
  if [ "${KGRAPH_SKIP_VARIANTS:-0}" != 1 ] && [ -d "$CASES/variants" ]; then
    echo
    echo "== configuration variants against the defaults (bench/bench_variant_sets.sh)"
    bash bench/bench_variant_sets.sh "$CASES" 2>&1 | tee "$LOGS/bench_variants.log"
    va_rc=${PIPESTATUS[0]}
    mapfile -t va_lines < <($PY - "$LOGS/bench_variants.log" <<'PYEOF'
import re, sys
sets, cur, wrong = {}, None, {}
for line in open(sys.argv[1]):
    if line.startswith("== "):
        cur = line[3:].strip()
        sets[cur], wrong[cur] = [], []
    elif cur and line.startswith("WRONG"):
        wrong[cur].append(line.split()[1].rstrip(":"))
    elif cur:
        m = re.match(r"(\S+\.plan\.json)\s+([0-9.]+)\s+([0-9.]+)x", line)
        if m:
            sets[cur].append((m.group(1).replace(".plan.json", ""), float(m.group(2)), float(m.group(3))))
for name, rows in sets.items():
    if not rows:
        print(f"{name}: FAILED (no times)")
        continue
    best = max(rows[1:], key=lambda r: r[2], default=rows[0])
    bad = f", WRONG: {' '.join(wrong[name])}" if wrong[name] else ""
    print(f"{name}: default {rows[0][1]:.4f} ms; best {best[0]} {best[1]:.4f} ms = {best[2]:.2f}x{bad}")
PYEOF
)
  fi

  # Whole models (ResNet-50, the encoder layer, ONNX ResNet-50) through
  # kgraph.compile, which needs a kgraph-opt here ($KGRAPH_OPT: the static
  # one of scripts/build-static-kgraph-opt.sh); several minutes, so
  # KGRAPH_SKIP_MODELS=1 leaves it out (run bench/bench_models.py alone).
  if [ "${KGRAPH_SKIP_MODELS:-0}" != 1 ]; then
    echo
    echo "== whole models through kgraph.compile (bench/bench_models.py)"
    # With KGRAPH_TUNING_DB, ResNet-50 batch 256 is also compiled with that
    # tuning database and timed beside the defaults (docs/tuning.md).
    $PY bench/bench_models.py --json "$LOGS/bench_models.json" \
      ${KGRAPH_TUNING_DB:+--tuning-db "$KGRAPH_TUNING_DB"} 2>&1 | tee "$LOGS/bench_models.log"
    md_rc=${PIPESTATUS[0]}
    mapfile -t md_lines < <(sed -n '/^== summary/,$p' "$LOGS/bench_models.log" | tail -n +2)
  fi
fi

fail=0
for rc in "$tests_rc" "${t_fail:-1}" "$mc_rc" "$ot_rc" "$bench_rc" "$mm_rc" "$cv_rc" "$gr_rc" "$tr_rc" "${md_rc:-0}" "${va_rc:-0}"; do
  [ "$rc" -ne 0 ] && fail=1
done
# On the GPU machine a skipped GPU test (no GPU, no manifest) is a failure.
[ "${t_pass:-0}" -eq 0 ] && [ "${KGRAPH_SKIP_TESTS:-0}" != 1 ] && [ "${KGRAPH_SKIP_MAIN_TESTS:-0}" != 1 ] && fail=1
[ "${t_skip:-0}" -ne 0 ] && fail=1
[ "${KGRAPH_STRICT:-0}" = 1 ] && [ "${t_unsup:-0}" -ne 0 ] && fail=1

echo
echo "================ kgraph GPU check summary ================"
# row LABEL TEXT: one summary line.
row() { printf "%-12s %s\n" "$1" "$2"; }
row "tests" "GPU tests: $t_pass passed, $t_skip skipped; failed (any test): $t_fail (${tests_time}s, seed $KGRAPH_TEST_SEED)"
row "matmul" "tests: $t_mm_pass passed, $t_mm_fail failed"
row "conv2d" "tests: $t_cv_pass passed, $t_cv_fail failed"
row "graphs" "tests: $t_gr_pass passed, $t_gr_fail failed (fused graphs)"
row "fuzz" "tests: $t_fz_pass passed, $t_fz_fail failed (random graphs, fuzz seed $fuzz_seed)"
row "unsupported" "$t_unsup matmul/conv2d tests skipped: no code generation"
row "memcheck" "errors: $mc_errors; tests: $mc_status; exit $mc_rc (${mc_time}s, subset $SUBSET)"
for l in "${ot_lines[@]}"; do row "targets" "$l"; done
row "bench" "$bench_line"
row "bench matmul" "$mm_line"
row "ptxas 4096" "$mm_ptxas"
row "bench conv2d" "$cv_line"
row "ptxas conv" "$cv_ptxas"
for l in "${gr_lines[@]}"; do row "bench fused" "$l"; done
for l in "${tr_lines[@]}"; do row "transpose" "$l"; done
for l in "${va_lines[@]}"; do row "variants" "$l"; done
for l in "${md_lines[@]}"; do row "models" "$l"; done
row "logs" "$LOGS"
result=$([ $fail -eq 0 ] && echo PASS || echo FAIL)
[ "${t_unsup:-0}" -ne 0 ] && result="$result ($t_unsup matmul/conv2d cases unsupported)"
row "result" "$result"
exit $fail
