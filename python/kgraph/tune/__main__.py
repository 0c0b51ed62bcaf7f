"""python3 -m kgraph.tune (and kgraph-tune): see kgraph/tune/__init__.py."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
