"""Per-kernel profiles of a Program (:meth:`kgraph.Program.profile`).

Each kernel's time is the median over the timed runs of the CUDA events
recorded just before it and just before the next launch. Its work comes from
the plan: ``flops`` and ``bytes`` are the compiler's counts of the group the
kernel computes (kgraph-lower-to-gpu: 2 per multiply-add of a matmul or
conv2d, one per window element of a pool, one per input element of a
reduction, one per result element of every other computing op; bytes = the
group's inputs and results, each moved once). Achieved TFLOP/s and GB/s are
those counts over the measured time.

The roofline fraction is the time the kernel would take at the device's peak
(``max(flops / peak_flops, bytes / peak_bandwidth)``, the peak compute being
that of the kernel's ``compute``: tensor-core f16/bf16, tf32, int8, or the
fp32 CUDA cores) divided by the measured time: 1.0 is at the roofline.

Peaks are datasheet numbers (dense, no sparsity) in :data:`DEVICE_PEAKS`,
looked up by device name; an unknown device gets no roofline column unless
the caller passes its own :class:`DevicePeaks`.
"""

import statistics
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple


@dataclass(frozen=True)
class DevicePeaks:
    """Peak throughputs of one GPU: ``tflops`` per kernel compute kind
    ("tensor_f16", "tensor_tf32", "tensor_i8", "simt") and device-memory
    bandwidth in GB/s."""

    name: str
    tflops: Dict[str, float]
    dram_gbps: float


#: Datasheet peaks (dense) of the GPUs kgraph is run on, matched by a
#: substring of the CUDA device name (first match wins) and the compute
#: capability. H200 SXM: 989 TFLOP/s f16/bf16, 495 tf32, 1979 int8, 67 fp32,
#: 4.8 TB/s HBM3e. H100 SXM: the same compute at 3.35 TB/s. A100 SXM4 80 GB:
#: 312 / 156 / 624 / 19.5 TFLOP/s at 2.039 TB/s.
DEVICE_PEAKS: Tuple[Tuple[str, Tuple[int, int], DevicePeaks], ...] = (
    ("H200", (9, 0), DevicePeaks(
        "H200 SXM", {"tensor_f16": 989.0, "tensor_tf32": 495.0,
                     "tensor_i8": 1979.0, "simt": 67.0}, 4800.0)),
    ("H100 80GB HBM3", (9, 0), DevicePeaks(
        "H100 SXM", {"tensor_f16": 989.0, "tensor_tf32": 495.0,
                     "tensor_i8": 1979.0, "simt": 67.0}, 3350.0)),
    ("A100-SXM4-80GB", (8, 0), DevicePeaks(
        "A100 SXM4 80GB", {"tensor_f16": 312.0, "tensor_tf32": 156.0,
                           "tensor_i8": 624.0, "simt": 19.5}, 2039.0)),
)


def lookup_device_peaks(device_name: str,
                        compute_capability=None) -> Optional[DevicePeaks]:
    """The peaks of the device called ``device_name`` (with that compute
    capability, when given), or None."""
    for key, cc, peaks in DEVICE_PEAKS:
        if key in device_name and (compute_capability is None or
                                   tuple(compute_capability) == cc):
            return peaks
    return None


@dataclass(frozen=True)
class KernelProfile:
    """One kernel's row of a :class:`Profile`."""

    name: str
    #: (op, source location) of each op the kernel computes.
    ops: Tuple[Tuple[str, str], ...]
    #: Median time over the timed runs, microseconds; all of them in
    #: ``times_us``.
    time_us: float
    times_us: Tuple[float, ...]
    #: Fraction of the sum of the kernels' times.
    share: float
    flops: Optional[int]
    bytes: Optional[int]
    compute: Optional[str]
    tflops: Optional[float]
    gbps: Optional[float]
    #: Time at the device's roofline over the measured time (None without
    #: the counts or the device's peaks).
    roofline: Optional[float]

    def as_dict(self) -> dict:
        return {"kernel": self.name,
                "ops": [{"op": o, "loc": l} for o, l in self.ops],
                "time_us": self.time_us, "share": self.share,
                "flops": self.flops, "bytes": self.bytes,
                "compute": self.compute, "tflops": self.tflops,
                "gbps": self.gbps, "roofline": self.roofline}


def _ops_text(ops) -> str:
    parts = []
    for op, loc in ops:
        name = op[len("kgraph."):] if op.startswith("kgraph.") else op
        parts.append(f"{name} ({loc})" if loc else name)
    return ", ".join(parts) if parts else "(copy)"


@dataclass
class Profile:
    """A per-kernel profile: ``kernels`` (one :class:`KernelProfile` per
    launch, in order), ``total_us`` (sum of their median times), the device
    and the peaks used for the roofline."""

    function: str
    device: str
    peaks: Optional[DevicePeaks]
    repeat: int
    kernels: List[KernelProfile] = field(default_factory=list)

    @property
    def total_us(self) -> float:
        return sum(k.time_us for k in self.kernels)

    @classmethod
    def from_times(cls, spec, times_us, device: str,
                   peaks: Optional[DevicePeaks], repeat: int) -> "Profile":
        """``times_us[i]``: the timed runs of kernel ``i`` of ``spec`` (a
        FunctionPlan), microseconds."""
        medians = [statistics.median(t) for t in times_us]
        total = sum(medians)
        rows = []
        for k, t, ts in zip(spec.kernels, medians, times_us):
            seconds = t * 1e-6
            tflops = gbps = roofline = None
            if seconds > 0 and k.flops is not None:
                tflops = k.flops / seconds / 1e12
            if seconds > 0 and k.bytes is not None:
                gbps = k.bytes / seconds / 1e9
            if (seconds > 0 and peaks is not None and k.flops is not None and
                    k.bytes is not None and k.compute in peaks.tflops):
                ideal = max(k.flops / (peaks.tflops[k.compute] * 1e12),
                            k.bytes / (peaks.dram_gbps * 1e9))
                roofline = ideal / seconds if ideal > 0 else None
            rows.append(KernelProfile(
                name=k.name, ops=tuple((o.op, o.loc) for o in k.ops),
                time_us=t, times_us=tuple(ts),
                share=t / total if total > 0 else 0.0, flops=k.flops,
                bytes=k.bytes, compute=k.compute, tflops=tflops, gbps=gbps,
                roofline=roofline))
        return cls(function=spec.name, device=device, peaks=peaks,
                   repeat=repeat, kernels=rows)

    def rows(self) -> List[dict]:
        """The table as dictionaries (one per kernel)."""
        return [k.as_dict() for k in self.kernels]

    def table(self) -> str:
        """The profile as a fixed-width text table."""
        def num(v, fmt):
            return "-" if v is None else format(v, fmt)

        header = ("kernel", "time us", "share", "TFLOP/s", "GB/s", "roofline",
                  "ops")
        lines = []
        for k in self.kernels:
            lines.append((k.name, num(k.time_us, ".2f"),
                          f"{100 * k.share:.1f}%", num(k.tflops, ".2f"),
                          num(k.gbps, ".1f"),
                          "-" if k.roofline is None
                          else f"{100 * k.roofline:.1f}%",
                          _ops_text(k.ops)))
        lines.append(("total", f"{self.total_us:.2f}", "100.0%" if
                      self.kernels else "-", "", "", "", ""))
        widths = [max(len(r[i]) for r in [header] + lines)
                  for i in range(len(header) - 1)]

        def fmt(r):
            cells = [r[0].ljust(widths[0])] + \
                [r[i].rjust(widths[i]) for i in range(1, len(widths))]
            return "  ".join(cells + [r[-1]]).rstrip()

        peaks = (f"roofline: {self.peaks.name} peaks" if self.peaks
                 else "roofline: no peak numbers for this device")
        title = (f"kgraph profile of '{self.function}' on {self.device} "
                 f"(median of {self.repeat} runs; {peaks})")
        return "\n".join([title, fmt(header)] + [fmt(r) for r in lines])

    def __str__(self):
        return self.table()
