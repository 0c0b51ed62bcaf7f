"""Exceptions raised by the kgraph runtime.

Every error the runtime raises on purpose is a :class:`KGraphError`. The
subclasses that describe a bad call also derive from the matching builtin
(``TypeError`` for a wrong argument count or dtype, ``ValueError`` for a wrong
shape or layout), so generic handlers keep working.
"""


class KGraphError(Exception):
    """Base class of every error the kgraph runtime raises."""


class PlanError(KGraphError):
    """The launch plan is malformed, of an unknown format or version, or names
    a PTX file that does not exist."""


class NoGPUError(KGraphError):
    """No usable CUDA GPU: libcuda could not be loaded, cuInit failed, or the
    machine has no device."""


class CudaError(KGraphError):
    """A CUDA driver call returned an error code.

    Attributes:
        call: the driver function that failed (e.g. ``cuLaunchKernel``).
        code: the numeric ``CUresult``.
        name: the ``cuGetErrorName`` text (e.g. ``CUDA_ERROR_INVALID_VALUE``).
    """

    def __init__(self, call, code, name, detail=""):
        self.call = call
        self.code = code
        self.name = name
        msg = f"{call} failed: {name} ({code})"
        if detail:
            msg += f": {detail}"
        super().__init__(msg)


class ArgumentCountError(KGraphError, TypeError):
    """The number of inputs or outputs does not match the plan."""


class ShapeError(KGraphError, ValueError):
    """An input or output has a different shape than the plan says."""


class DTypeError(KGraphError, TypeError):
    """An input or output has a different element type than the plan says, or
    an unsupported array type (e.g. numpy for a bf16 buffer)."""


class LayoutError(KGraphError, ValueError):
    """A preallocated output is not contiguous, not 16-byte aligned, or not
    writeable, or tensors live on different devices."""


class ModelSourceError(KGraphError, ValueError):
    """An importer cannot read its source: no such module or callable, not
    an ``nn.Module``, an unreadable or corrupt file, or a bad ``--input``
    shape spec."""


class UnsupportedModelError(KGraphError):
    """An import met nodes it cannot map to kgraph ops. ``nodes`` lists each
    as a dict with ``name``, ``op``, ``reason`` and ``location`` (None when
    the source has none); the message names every one."""

    def __init__(self, nodes, source=""):
        self.nodes = list(nodes)
        head = (f"cannot import {source}: " if source else "cannot import: ")
        head += (f"{len(self.nodes)} unsupported node"
                 f"{'s' if len(self.nodes) != 1 else ''}")
        lines = [head]
        for n in self.nodes:
            line = f"  {n['name']}: {n['op']}"
            if n.get("reason"):
                line += f" ({n['reason']})"
            if n.get("location"):
                line += f" at {n['location']}"
            lines.append(line)
        super().__init__("\n".join(lines))


class CompileError(KGraphError):
    """kgraph-opt or kgraph-translate is missing or failed; the message has
    the command and the tool's diagnostics."""


class WeightsError(PlanError):
    """The weights file of a plan is unreadable or malformed, or a parameter
    the plan needs is missing from it or has another dtype, shape or size."""
