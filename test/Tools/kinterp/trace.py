"""What a kernel run in the interpreter did, access by access (the
memory.TRACE hook), for the CPU models of test/Tools that compare a
compiled kernel's thread mapping with their own:

    with tracing() as rec:
        run_plan(fplan, module, inputs)
    loads = rec.accesses("load", "input 0")   # one row per element read

Lanes are named by their linear block id in the grid and linear thread id
in the block; `seq` numbers the events in execution order, which is each
thread's program order.
"""
import contextlib

import numpy as np

from . import memory

#: Columns of Recorder.accesses.
ACCESS = np.dtype([("seq", np.int64), ("block", np.int64), ("thread", np.int64),
                   ("elem", np.int64), ("first", np.int64), ("width", np.int64),
                   ("value", np.float64)])


class Event:
    __slots__ = ("kind", "line", "seq", "kernel", "block", "thread", "fields")


class Recorder:
    """The events of every kernel run while it is memory.TRACE."""

    def __init__(self):
        self.events = []

    def __call__(self, ip, op, kind, **fields):
        lanes = ip.lanes
        sel = fields["lanes"]
        gx, gy, _ = lanes.grid
        e = Event()
        e.kind, e.line, e.seq, e.kernel = kind, op.line, len(self.events), ip.kernel_name
        e.block = (lanes.bid[0][sel] + gx * (lanes.bid[1][sel] + gy * lanes.bid[2][sel]))
        e.thread = lanes.lin_tid[sel]
        e.fields = fields
        self.events.append(e)

    def events_of(self, kind, buffer=None):
        """The events of `kind` (on a buffer whose name contains `buffer`)."""
        return [e for e in self.events if e.kind == kind and
                (buffer is None or buffer in e.fields["buf"].name)]

    def accesses(self, kind, buffer):
        """The "load" or "store" events on `buffer` as ACCESS rows, one per
        element: `first` and `width` are the access's first element and
        width (a vector access gives `width` rows)."""
        parts = []
        for e in self.events_of(kind, buffer):
            el = e.fields["elems"]
            k, w = el.shape
            r = np.zeros((k, w), ACCESS)
            r["seq"] = e.seq
            r["block"] = e.block[:, None]
            r["thread"] = e.thread[:, None]
            r["elem"] = el
            r["first"] = el[:, :1]
            r["width"] = w
            v = e.fields["values"]
            r["value"] = np.nan if v is None else np.asarray(v, np.float64)
            parts.append(r.reshape(-1))
        return np.concatenate(parts) if parts else np.zeros(0, ACCESS)


@contextlib.contextmanager
def tracing():
    """Sets memory.TRACE to a new Recorder for the `with` body."""
    rec = Recorder()
    old, memory.TRACE = memory.TRACE, rec
    try:
        yield rec
    finally:
        memory.TRACE = old
