"""``python3 -m kgraph.import SOURCE [--input SHAPE:DTYPE]... [--dtype f32|f16|bf16]
[--layout nchw|nhwc] -o OUT.mlir``: import a model to kgraph IR (docs/importers.md).

The command-line front door of :func:`kgraph.importers.import_model`. It
writes OUT.mlir and the weights beside it (OUT.safetensors) and prints what
it wrote. A source it cannot read or a model with ops it cannot map gets a
message on stderr (every unsupported node listed) and exit status 1, with
nothing written.
"""

import sys

from kgraph.importers.cli import main

if __name__ == "__main__":
    sys.exit(main())
