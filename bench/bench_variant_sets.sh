#!/usr/bin/env bash
# Times every variant folder under CASES/variants (scripts/build-variant-sets.sh)
# with bench/bench_plans.py: each folder's a_default against its other plans,
# outputs checked against a_default's. On the GPU machine:
#   bash bench/bench_variant_sets.sh .gpu [FOLDER...]
# Exit 1 if any folder's run failed (a WRONG variant included).
set -uo pipefail
cases=${1:?usage: bench_variant_sets.sh CASES [FOLDER...]}
shift
root=$(cd "$(dirname "$0")/.." && pwd)
folders=("$@")
if [ ${#folders[@]} -eq 0 ]; then
  for d in "$cases"/variants/*/; do folders+=("$(basename "$d")"); done
fi
rc=0
for f in "${folders[@]}"; do
  dir=$cases/variants/$f
  echo "== $f"
  mapfile -t plans < <(ls "$dir"/*.plan.json | grep -v '/a_default\.plan\.json$')
  python3 -u "$root/bench/bench_plans.py" "$dir/a_default.plan.json" "${plans[@]}" || rc=1
done
exit $rc
