"""pytest setup of the GPU tests: the case manifest, the seed and the GPU.

Test functions taking ``case`` run over the manifest's elementwise cases,
those taking ``matmul_case`` over its kgraph.matmul cases. The manifest
comes from --kgraph-cases (a manifest.json or the folder holding it), else
$KGRAPH_GPU_CASES, else <repo>/.gpu/manifest.json; it is written by
scripts/build-gpu-cases.py. Without a manifest or without a usable CUDA GPU
every test is skipped with the reason.
"""

import json
import os
import random
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "python"))


def pytest_addoption(parser):
    g = parser.getgroup("kgraph")
    g.addoption("--kgraph-cases", default=None,
                help="manifest.json of compiled cases, or its folder "
                     "(default: $KGRAPH_GPU_CASES, else .gpu/manifest.json)")
    g.addoption("--kgraph-seed", type=int, default=None,
                help="seed of the random inputs (default: $KGRAPH_TEST_SEED, "
                     "else a fresh one each run, printed in the header)")
    g.addoption("--kgraph-subset", choices=("all", "memcheck"), default="all",
                help="'memcheck': only the representative subset the manifest "
                     "marks for compute-sanitizer")


def _manifest_path(config):
    p = (config.getoption("--kgraph-cases") or os.environ.get("KGRAPH_GPU_CASES")
         or os.path.join(REPO, ".gpu", "manifest.json"))
    if os.path.isdir(p):
        p = os.path.join(p, "manifest.json")
    return os.path.abspath(p)


def pytest_configure(config):
    seed = config.getoption("--kgraph-seed")
    if seed is None:
        env = os.environ.get("KGRAPH_TEST_SEED")
        seed = int(env) if env else random.SystemRandom().randrange(2 ** 31)
    config.kgraph_seed = seed
    path = _manifest_path(config)
    config.kgraph_manifest_path = path
    config.kgraph_manifest = None
    config.kgraph_manifest_error = None
    if not os.path.isfile(path):
        config.kgraph_manifest_error = (
            f"no GPU case manifest at {path}: build one with "
            f"scripts/build-gpu-cases.py <kgraph-opt> .gpu")
        return
    with open(path) as f:
        config.kgraph_manifest = json.load(f)
    config.kgraph_manifest["_dir"] = os.path.dirname(path)


def pytest_report_header(config):
    return [f"kgraph: seed {config.kgraph_seed} (rerun with --kgraph-seed="
            f"{config.kgraph_seed} or KGRAPH_TEST_SEED={config.kgraph_seed})",
            f"kgraph: manifest {config.kgraph_manifest_path}"
            + ("" if config.kgraph_manifest else " (missing)")]


def _skip_param(metafunc, name, reason, id_):
    metafunc.parametrize(name, [pytest.param(
        None, marks=pytest.mark.skip(reason=reason))], ids=[id_])


def pytest_generate_tests(metafunc):
    """``case``: the elementwise cases (manifest section "cases");
    ``matmul_case``: the kgraph.matmul cases (section "matmul");
    ``conv_case``: the kgraph.conv2d cases (section "conv");
    ``graph_case``: the whole-graph (fusion) cases (section "graphs");
    ``fuzz_case``: the random graphs (section "fuzz", test/fuzz/gpu_cases.py);
    ``runtime_case``: the runtime cases (section "runtime",
    test/GPU/cases/runtime_cases.py)."""
    for fixture, section in (("case", "cases"), ("matmul_case", "matmul"),
                             ("conv_case", "conv"),
                             ("graph_case", "graphs"),
                             ("fuzz_case", "fuzz"),
                             ("runtime_case", "runtime")):
        if fixture in metafunc.fixturenames:
            _parametrize_cases(metafunc, fixture, section)


def _parametrize_cases(metafunc, fixture, section):
    config = metafunc.config
    manifest = config.kgraph_manifest
    if manifest is None:
        _skip_param(metafunc, fixture, config.kgraph_manifest_error, "no-manifest")
        return
    if section not in manifest:
        _skip_param(metafunc, fixture,
                    f"{config.kgraph_manifest_path} has no '{section}' "
                    f"section: rebuild it with scripts/build-gpu-cases.py "
                    f"(default --suite all)", f"no-{section}")
        return
    cases = manifest[section]
    if config.getoption("--kgraph-subset") == "memcheck":
        cases = [c for c in cases if c.get("memcheck")]
    metafunc.parametrize(fixture, cases, ids=[c["name"] for c in cases])


_gpu_state = {}


def _gpu_skip_reason():
    """None when a CUDA GPU is usable through torch and the kgraph driver."""
    if "reason" not in _gpu_state:
        reason = None
        try:
            import torch
        except ImportError as e:
            reason = f"torch is not importable: {e}"
        else:
            if not torch.cuda.is_available():
                reason = "no CUDA GPU available: torch.cuda.is_available() is False"
            else:
                import kgraph
                try:
                    kgraph.driver.get_driver()
                except kgraph.NoGPUError as e:
                    reason = str(e)
        _gpu_state["reason"] = reason
    return _gpu_state["reason"]


@pytest.fixture(scope="session")
def gpu():
    reason = _gpu_skip_reason()
    if reason:
        pytest.skip(reason)
    import torch
    return torch.device("cuda", torch.cuda.current_device())


@pytest.fixture(scope="session")
def seed(request):
    return request.config.kgraph_seed


@pytest.fixture(scope="session")
def cases_dir(request):
    return request.config.kgraph_manifest["_dir"]
