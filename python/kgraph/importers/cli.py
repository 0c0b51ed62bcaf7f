"""The command line of ``python3 -m kgraph.import`` (see kgraph/import.py)."""

import argparse
import sys

from ..errors import CompileError, ModelSourceError, UnsupportedModelError


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        print(f"kgraph.import: error: {message}", file=sys.stderr)
        sys.exit(2)


def parser():
    p = _Parser(prog="python3 -m kgraph.import",
                description="Import a PyTorch module, an ONNX file or a JSON graph "
                            "to kgraph IR plus a weights file (docs/importers.md).")
    p.add_argument("source", help="package.module:callable (returns an nn.Module), "
                                  "MODEL.onnx or GRAPH.json")
    p.add_argument("--input", action="append", default=[], metavar="SHAPE:DTYPE",
                   help="shape and dtype of a real input, in order, e.g. 8x3x224x224:f32")
    p.add_argument("--dtype", choices=("f32", "f16", "bf16"), default=None,
                   help="convert weights and computation to this float type")
    p.add_argument("--layout", choices=("nchw", "nhwc"), default=None,
                   help="activation layout of the IR (nhwc: 4-D inputs and outputs "
                        "are NHWC, filters permuted at import)")
    p.add_argument("--weights", default=None, metavar="PATH",
                   help="weights file (default: OUT with .safetensors)")
    p.add_argument("--tracer", choices=("auto", "export", "make_fx"), default="auto",
                   help="how to trace a PyTorch model (auto: torch.export where it "
                        "exists, else make_fx)")
    p.add_argument("-o", "--output", required=True, metavar="OUT.mlir")
    from .. import __version__
    p.add_argument("--version", action="version",
                   version=f"kgraph-import {__version__}")
    return p


def main(argv=None):
    args = parser().parse_args(argv)
    from . import import_model
    try:
        r = import_model(args.source, inputs=args.input, dtype=args.dtype,
                         layout=args.layout, output=args.output, weights=args.weights,
                         tracer=args.tracer)
    except (ModelSourceError, UnsupportedModelError, CompileError) as e:
        print(f"kgraph.import: error: {e}", file=sys.stderr)
        return 1
    print(r.summary())
    return 0
