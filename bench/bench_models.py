#!/usr/bin/env python3
"""Whole models through kgraph.compile on the GPU, against torch in the same run.

    python3 bench/bench_models.py [--only resnet50,encoder,onnx,vision] [--json OUT.json]
        [--vision squeezenet1_0,googlenet,...] [--vision-batch 32]

Needs a GPU, torch with torchvision, and a kgraph-opt ($KGRAPH_OPT, e.g. the
static one unpacked by scripts/unpack-kgraph-opt.sh). For each model:
correctness first (the kgraph result against torch eager in float32 on
fresh random inputs: relative L2 error, and top-1 agreement for the
classifier), then the time of kgraph, torch eager and torch.compile on the
same inputs (CUDA events, medians), and the ratios.

- resnet50: torchvision ResNet-50 (random weights, BN folded at import),
  f16 NHWC: images/s at batch 256; latency at batch 1 with and without a
  CUDA graph (kgraph: Program.capture; torch.compile: mode
  "reduce-overhead"); import + compile time.
- encoder: nn.TransformerEncoderLayer(768, 12 heads, batch_first), f16,
  batch 8, sequence 128 and 512: tokens/s.
- onnx: the same ResNet-50 exported to ONNX (opset 13), f16 NHWC, batch 8:
  correctness only.
- vision (not in the default --only): other torchvision classifiers as a
  new user would bring them (--vision names them; random weights), f16
  NHWC at --vision-batch: images/s against torch eager (f16 channels-last)
  and torch.compile; a model kgraph cannot import or compile is a FAIL row
  with the compiler's message, and the run goes on.

With --tuning-db DB, ResNet-50 at batch 256 is compiled a second time with
that tuning database, checked the same way and timed beside the defaults
(the default timed before and after it, the better kept); with
--variant-flags FLAGS, likewise with those extra kgraph-opt flags (a
compiler option measured against the defaults in one run).
--variant-batches 1,256 does both at batch 1 too (CUDA graph replays).
"""

import argparse
import json
import math
import os
import sys
import tempfile
import time
import traceback

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(REPO, "python"))

import torch  # noqa: E402

import kgraph  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import time_events  # noqa: E402

RESULTS = []


def timed(fn):
    """Median milliseconds per call of fn (benchlib's CUDA-event timer)."""
    return time_events(fn, warmup=3, inner=10, trials=7)


def rel_l2(y, ref):
    y, ref = y.double(), ref.double()
    return float((y - ref).norm() / ref.norm().clamp_min(1e-30))


def record(model, what, **kw):
    row = {"model": model, "what": what, **kw}
    RESULTS.append(row)
    print("  " + what + ": " + ", ".join(
        f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in kw.items()),
        flush=True)


def compile_timed(model, examples, **kw):
    t0 = time.perf_counter()
    prog = kgraph.compile(model, examples, target="sm_90a",
                          cache_dir=tempfile.mkdtemp(prefix="kgraph-bench-"), **kw)
    return prog, time.perf_counter() - t0


def torch_compiled(model, mode=None):
    try:
        return torch.compile(model, mode=mode)
    except Exception as e:  # noqa: BLE001
        print(f"  torch.compile unavailable: {e}")
        return None


def compare_variant(model, prog, xk, ref, t_e, t_c, name, compile_kw, label=None):
    """ResNet-50 compiled with `compile_kw` besides the defaults (`prog`):
    checked like it and timed beside it (the default timed before and after,
    its better kept; at batch 1 both as CUDA graph replays, `t_c` being
    reduce-overhead's). Records "<what> <name>" rows."""
    batch = xk.shape[0]
    variant, secs = compile_timed(model.cpu(), [torch.randn(batch, 3, 224, 224)],
                                  dtype="f16", layout="nhwc", **compile_kw)
    model.cuda()
    extra = {"from_" + k.replace(" ", "_"): v for k, v in (variant.tuning or {}).items()}
    if label:
        extra["flags"] = label
    record("resnet50", f"compile b{batch} {name}", seconds=secs,
           kernels=len(variant.spec.kernels) if hasattr(variant, "spec") else None, **extra)
    with torch.no_grad():
        yv = variant(xk)
    err = rel_l2(yv.float(), ref)
    top1 = float((yv.float().argmax(1) == ref.argmax(1)).float().mean())
    ok = err <= 1e-2 and top1 >= 0.99
    record("resnet50", f"check b{batch} {name}", rel_l2=err, top1_agree=top1,
           status="PASS" if ok else "FAIL")
    with torch.no_grad():
        if batch == 1:
            # Latency: both through CUDA graphs, as the batch-1 row times.
            g_d, g_v = prog.capture(xk), variant.capture(xk)
            run_d, run_v = g_d.replay, g_v.replay
        else:
            run_d, run_v = (lambda: prog(xk)), (lambda: variant(xk))
        t_d = timed(run_d)
        t_v = timed(run_v)
        t_d2 = timed(run_d)
        if batch == 1:
            g_d.close()
            g_v.close()
    t_d = min(t_d, t_d2)
    record("resnet50", f"time b{batch} {name}", kgraph_ms=t_d, **{
        f"{name}_ms": t_v, "kgraph_img_s": batch / t_d * 1e3,
        f"{name}_img_s": batch / t_v * 1e3, f"{name}_vs_default": t_d / t_v,
        f"{name}_vs_eager": t_e / t_v, f"{name}_vs_compile": t_c / t_v},
        **({"graphs": True} if batch == 1 else {}))
    print_profile(variant, xk, f" {name}", 5)
    del variant


def check_nhwc(model, prog, ref_model, batch, size, top1_bar):
    """Runs ``prog`` on fresh f16 NHWC images against ``ref_model`` in f32
    and records the check row (rel. L2 <= 1e-2, top-1 agreement at least
    ``top1_bar`` unless None). Returns the NHWC input and the reference."""
    x = torch.randn(batch, 3, size, size, device="cuda")
    xk = x.permute(0, 2, 3, 1).contiguous().half()
    with torch.no_grad():
        ref = ref_model(x)
        y = prog(xk)
    err = rel_l2(y.float(), ref)
    top1 = float((y.float().argmax(1) == ref.argmax(1)).float().mean())
    ok = err <= 1e-2 and (top1_bar is None or top1 >= top1_bar)
    record(model, f"check b{batch}", rel_l2=err, top1_agree=top1,
           status="PASS" if ok else "FAIL")
    return xk, ref


def bench_resnet50(tuning_db=None, variant_flags=None, variant_batches=(256,)):
    import torchvision
    print("== resnet50 (f16 NHWC)", flush=True)
    torch.manual_seed(0)
    model = torchvision.models.resnet50().eval()
    ref_model = model.cuda().float()
    half = torchvision.models.resnet50().eval()
    half.load_state_dict(model.state_dict())
    half = half.cuda().half().to(memory_format=torch.channels_last)
    torch.backends.cudnn.benchmark = True
    for batch in (256, 1):
        prog, secs = compile_timed(model.cpu(), [torch.randn(batch, 3, 224, 224)],
                                   dtype="f16", layout="nhwc")
        model.cuda()
        kernels = len(prog.spec.kernels) if hasattr(prog, "spec") else None
        record("resnet50", f"compile b{batch}", seconds=secs, kernels=kernels)
        xk, ref = check_nhwc("resnet50", prog, ref_model, batch, 224, top1_bar=0.99)
        xh = xk.permute(0, 3, 1, 2)  # NCHW view of channels-last data
        with torch.no_grad():
            t_k = timed(lambda: prog(xk))
            t_e = timed(lambda: half(xh))
            comp = torch_compiled(half, mode="reduce-overhead" if batch == 1 else None)
            t_c = timed(lambda: comp(xh)) if comp is not None else float("nan")
        row = {"kgraph_ms": t_k, "eager_ms": t_e, "compile_ms": t_c,
               "vs_eager": t_e / t_k, "vs_compile": t_c / t_k}
        if batch == 1:
            graph = prog.capture(xk)
            t_g = timed(lambda: graph.replay())
            gy = graph(xk)
            row.update(graph_ms=t_g, graph_vs_compile=t_c / t_g,
                       graph_rel_l2=rel_l2(gy.float(), ref))
        else:
            row.update(kgraph_img_s=batch / t_k * 1e3, eager_img_s=batch / t_e * 1e3,
                       compile_img_s=batch / t_c * 1e3)
        record("resnet50", f"time b{batch}", **row)
        # Batch 1: where the latency goes, kernel by kernel.
        print_profile(prog, xk, "", 5 if batch == 256 else 15)
        # The same graph compiled another way (with the tuning database;
        # with extra kgraph-opt flags), checked and timed in this run
        # beside the model's defaults.
        if batch in variant_batches:
            if tuning_db:
                compare_variant(model, prog, xk, ref, t_e, t_c, "tuned",
                                dict(tuning_db=tuning_db))
            for i, flags in enumerate(variant_flags or ()):
                compare_variant(model, prog, xk, ref, t_e, t_c,
                                "flags" if i == 0 else f"flags{i + 1}",
                                dict(extra_flags=flags.split()), label=flags)
        del prog


def print_profile(prog, x, label, top):
    """Prints the ``top`` longest kernels of ``prog.profile(x)`` with the ops
    each holds."""
    prof = prog.profile(x, repeat=5, print=False)
    print(f"    profile{label}: {len(prof.kernels)} kernels, {prof.total_us / 1e3:.3f} ms "
          f"summed; the {top} longest:", flush=True)
    for k in sorted(prof.kernels, key=lambda k: -k.time_us)[:top]:
        roof = "-" if k.roofline is None else f"{k.roofline:.2f}"
        ops = ",".join(sorted({o[0] for o in k.ops}))
        print(f"      {k.name}: {k.time_us:.1f} us ({k.share:.1%}), roofline {roof}, "
              f"ops {ops[:80]}", flush=True)


def bench_encoder():
    print("== encoder layer (f16)", flush=True)
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(768, 12, batch_first=True).eval()
    ref_layer = layer.cuda().float()
    half = torch.nn.TransformerEncoderLayer(768, 12, batch_first=True).eval()
    half.load_state_dict(layer.state_dict())
    half = half.cuda().half()
    for seq in (128, 512):
        prog, secs = compile_timed(layer.cpu(), [torch.randn(8, seq, 768)], dtype="f16")
        layer.cuda()
        record("encoder", f"compile s{seq}", seconds=secs)
        x = torch.randn(8, seq, 768, device="cuda")
        with torch.no_grad():
            ref = ref_layer(x)
            y = prog(x.half())
        err = rel_l2(y.float(), ref)
        record("encoder", f"check s{seq}", rel_l2=err, status="PASS" if err <= 1e-2 else "FAIL")
        xh = x.half()
        with torch.no_grad():
            t_k = timed(lambda: prog(xh))
            t_e = timed(lambda: half(xh))
            comp = torch_compiled(half)
            t_c = timed(lambda: comp(xh)) if comp is not None else float("nan")
            graph = prog.capture(xh)
            t_g = timed(lambda: graph.replay())
            g_err = rel_l2(graph(xh).float(), ref)
        tok = 8 * seq
        record("encoder", f"time s{seq}", kgraph_ms=t_k, eager_ms=t_e, compile_ms=t_c,
               kgraph_tok_s=tok / t_k * 1e3, eager_tok_s=tok / t_e * 1e3,
               compile_tok_s=tok / t_c * 1e3, vs_eager=t_e / t_k, vs_compile=t_c / t_k,
               graph_ms=t_g, graph_tok_s=tok / t_g * 1e3, graph_vs_eager=t_e / t_g,
               graph_vs_compile=t_c / t_g, graph_rel_l2=g_err)
        print_profile(prog, xh, f" s{seq}", 6)
        del prog


VISION_DEFAULT = ("squeezenet1_0,googlenet,inception_v3,convnext_tiny,mobilenet_v2,"
                  "efficientnet_b0,densenet121,regnet_x_400mf,swin_t")


def bench_vision(names, batch):
    import torchvision
    for name in names:
        print(f"== {name} (f16 NHWC, batch {batch})", flush=True)
        try:
            _bench_one_vision(torchvision, name, batch)
        except Exception as e:  # noqa: BLE001 - report and go on to the next model
            record(name, "error", status="FAIL", message=str(e).splitlines()[0][:300])
            traceback.print_exc()
        torch.cuda.empty_cache()


def _bench_one_vision(torchvision, name, batch):
    torch.manual_seed(0)
    kw = {"aux_logits": False, "init_weights": True} \
        if name in ("googlenet", "inception_v3") else {}
    make = getattr(torchvision.models, name)
    model = make(**kw).eval()
    size = 299 if name == "inception_v3" else 224
    prog, secs = compile_timed(model, [torch.randn(batch, 3, size, size)],
                               dtype="f16", layout="nhwc")
    record(name, f"compile b{batch}", seconds=secs,
           kernels=len(prog.spec.kernels) if hasattr(prog, "spec") else None)
    half = make(**kw).eval()
    half.load_state_dict(model.state_dict())
    ref_model = model.cuda().float()
    half = half.cuda().half().to(memory_format=torch.channels_last)
    # Random weights give near-tied logits: rel. L2 decides, top-1 is shown.
    xk, _ = check_nhwc(name, prog, ref_model, batch, size, top1_bar=None)
    xh = xk.permute(0, 3, 1, 2)
    with torch.no_grad():
        t_k = timed(lambda: prog(xk))
        t_e = timed(lambda: half(xh))
        comp = torch_compiled(half)
        t_c = timed(lambda: comp(xh)) if comp is not None else float("nan")
    record(name, f"time b{batch}", kgraph_ms=t_k, eager_ms=t_e, compile_ms=t_c,
           vs_eager=t_e / t_k, vs_compile=t_c / t_k, kgraph_img_s=batch / t_k * 1e3)
    print_profile(prog, xk, "", 3)
    del prog, comp


def bench_onnx():
    import torchvision
    print("== resnet50 through ONNX (f16 NHWC, batch 8)", flush=True)
    torch.manual_seed(0)
    model = torchvision.models.resnet50().eval()
    path = os.path.join(tempfile.mkdtemp(prefix="kgraph-onnx-"), "resnet50.onnx")
    kw = {"dynamo": False} if "dynamo" in torch.onnx.export.__code__.co_varnames else {}
    torch.onnx.export(model, torch.randn(8, 3, 224, 224), path, opset_version=13, **kw)
    prog, secs = compile_timed(path, ["8x3x224x224:f32"], dtype="f16", layout="nhwc")
    record("onnx-resnet50", "compile b8", seconds=secs)
    model = model.cuda()
    x = torch.randn(8, 3, 224, 224, device="cuda")
    with torch.no_grad():
        ref = model(x)
        y = prog(x.permute(0, 2, 3, 1).contiguous().half())
    err = rel_l2(y.float(), ref)
    top1 = float((y.float().argmax(1) == ref.argmax(1)).float().mean())
    record("onnx-resnet50", "check b8", rel_l2=err, top1_agree=top1,
           status="PASS" if err <= 1e-2 and top1 >= 0.99 else "FAIL")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="resnet50,encoder,onnx")
    ap.add_argument("--json", default=None)
    ap.add_argument("--vision", default=VISION_DEFAULT,
                    help="torchvision classifiers of --only vision (comma-separated "
                    f"names; default {VISION_DEFAULT})")
    ap.add_argument("--vision-batch", type=int, default=32)
    ap.add_argument("--tuning-db", default=None,
                    help="also compile ResNet-50 with this tuning database "
                    "(python3 -m kgraph.tune) and time it beside the defaults")
    ap.add_argument("--variant-flags", action="append", default=None,
                    help="also compile ResNet-50 with these extra kgraph-opt "
                    "flags (e.g. '--split-k-convs=false') and time it beside "
                    "the defaults; repeat for several variants (rows "
                    "'flags', 'flags2', ...)")
    ap.add_argument("--variant-batches", default="256",
                    help="the ResNet-50 batches (of 256,1) --tuning-db and "
                    "--variant-flags apply to (default 256; batch 1 compares "
                    "CUDA graph replays)")
    args = ap.parse_args()
    try:
        variant_batches = tuple(int(b) for b in args.variant_batches.split(","))
    except ValueError:
        ap.error(f"--variant-batches: expected batches like 256,1, got "
                 f"{args.variant_batches!r}")
    if not set(variant_batches) <= {1, 256}:
        ap.error("--variant-batches: ResNet-50 runs at batches 256 and 1")
    if not torch.cuda.is_available():
        sys.exit("bench_models: no GPU")
    print(f"device: {torch.cuda.get_device_name()}  torch {torch.__version__}", flush=True)
    failed = False
    for name in args.only.split(","):
        fn = {"resnet50": lambda: bench_resnet50(args.tuning_db, args.variant_flags,
                                                   variant_batches),
              "encoder": bench_encoder, "onnx": bench_onnx,
              "vision": lambda: bench_vision(args.vision.split(","), args.vision_batch)
              }.get(name)
        if fn is None:
            ap.error(f"--only: unknown model {name!r} (resnet50, encoder, onnx, vision)")
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - report and go on to the next model
            failed = True
            record(name, "error", status="FAIL", message=str(e).splitlines()[0][:300])
            traceback.print_exc()
    failed |= any(r.get("status") == "FAIL" for r in RESULTS)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(RESULTS, f, indent=1, default=str)
    print("== summary")
    for r in RESULTS:
        if r["what"].startswith(("check", "time", "error")):
            print(f"{r['model']:14s} {r['what']:12s} " + " ".join(
                f"{k}={v:.4g}" if isinstance(v, float) and math.isfinite(v) else f"{k}={v}"
                for k, v in r.items() if k not in ("model", "what")))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
