"""scripts/model-registers.py: the model's register estimates against
ptxas's, per pinned candidate (no GPU)."""

import json
import os
import shutil
import subprocess
import sys

import pytest

import kgraph

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(ROOT, "scripts", "model-registers.py")
PTXAS = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"

GRAPH = """
func.func @main(%a: tensor<512x256xf16>, %b: tensor<256x384xf16>) -> tensor<512x384xf16> {
  %0 = kgraph.matmul %a, %b : tensor<512x256xf16>, tensor<256x384xf16> -> tensor<512x384xf16>
  return %0 : tensor<512x384xf16>
}
"""


def _opt():
    try:
        return kgraph.find_tool("kgraph-opt")
    except kgraph.CompileError as e:
        pytest.fail(f"model-registers.py's tests need kgraph-opt: {e}")


def _run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


def test_rows_compare_model_and_ptxas(tmp_path):
    if not os.access(PTXAS, os.X_OK) and not os.environ.get("KGRAPH_ALLOW_NO_PTXAS"):
        pytest.fail(f"no ptxas at {PTXAS}")
    if not os.access(PTXAS, os.X_OK):
        pytest.skip("no ptxas (KGRAPH_ALLOW_NO_PTXAS)")
    graph = tmp_path / "mm.mlir"
    graph.write_text(GRAPH)
    out = tmp_path / "rows.json"
    r = _run("--opt", _opt(), "--ptxas", PTXAS, "--per-graph", "3", "--jobs", "2",
             "--json", str(out), str(graph))
    assert r.returncode == 0, r.stdout + r.stderr
    rows = json.loads(out.read_text())
    assert 1 <= len(rows) <= 3
    for row in rows:
        assert row["config"].startswith("#kgraph.matmul_config<")
        assert "copy = tma" not in row["config"]
        assert row["model_regs"] > 0 and row["model_blocks_per_sm"] > 0, row
        assert 0 < row["ptxas_regs"] <= 255 and row["spill_bytes"] >= 0, row
    assert len(r.stdout.strip().splitlines()) == len(rows)
    assert "ptxas" in r.stdout and "model" in r.stdout


def test_bad_input_is_a_message(tmp_path):
    r = _run("--opt", _opt(), "--ptxas", PTXAS, str(tmp_path / "missing.mlir"))
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "missing.mlir" in r.stderr, r.stderr
    two = tmp_path / "two.mlir"
    two.write_text(GRAPH.replace("@main", "@one") + GRAPH.replace("@main", "@two"))
    r = _run("--opt", _opt(), "--ptxas", PTXAS, str(two))
    assert r.returncode == 1 and "2 GEMM groups (need one)" in r.stderr, r.stderr
    r = _run("--opt", str(tmp_path / "no-opt"), str(two))
    assert r.returncode == 1 and "is not an executable file" in r.stderr, r.stderr
