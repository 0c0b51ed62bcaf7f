"""Data-parallel execution of one compiled plan on every GPU of a host.

Launch one process per GPU with ``torchrun``; each process loads the same
plan on its own GPU (``cuda:LOCAL_RANK``, one module load and one upload of
the weights per device), and rank 0's global batch is cut into shards, run,
and gathered back to rank 0::

    # serve.py, run as: torchrun --nproc_per_node=8 serve.py
    import torch, kgraph
    dp = kgraph.distributed.DataParallel("resnet50_b256.plan.json")
    x = load_images() if dp.rank == 0 else None   # [B, 224, 224, 3] f16
    y = dp(x)             # rank 0: [B, 1000] on x's device; other ranks: None
    y_local = dp.run_local(my_rows)   # no communication: this rank's rows only
    dp.close()

Plans have static shapes. A function compiled for ``b`` rows per call (the
leading dimension of its inputs and outputs) runs a global batch of ``B``
rows as ``calls = ceil(B / (world * b))`` calls on every rank. Rank ``r``
owns the global rows ``[r * shard, (r + 1) * shard)`` (``shard = calls * b``)
that exist: the batch fills the ranks in order, so only the rank holding
row ``B - 1`` has a partly filled shard and the ranks after it have none.
Missing rows are **zeros** (the pad); calls made only of pad rows are not
run, and the results of pad rows are dropped before the result is
assembled (rank 0's rows first, then rank 1's, ...): the result has exactly
``B`` rows, in the input's order. :func:`plan_shards` does this arithmetic
(no torch, no GPU), :func:`split_padded` and :func:`assemble` the two data
steps.

Collectives: the batch size is broadcast from rank 0 (``dist.broadcast``),
the shards are scattered (``dist.scatter``) and the results gathered
(``dist.gather``), on the process group's backend: NCCL on the GPUs when
CUDA is available, else gloo on the CPU. ``torchrun`` sets RANK,
LOCAL_RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT; DataParallel starts the
process group from them unless the caller already did
(``torch.distributed.init_process_group``), and ``close()`` ends only a
group it started. See docs/runtime.md ("Several GPUs").
"""

import datetime
import os
from dataclasses import dataclass
from typing import Optional, Tuple

from .errors import (ArgumentCountError, DTypeError, KGraphError, PlanError,
                     ShapeError)

__all__ = ["DataParallel", "DistributedError", "LaunchEnv", "ShardPlan",
           "all_gather_into_tensor", "assemble", "check_batch",
           "launch_env", "per_call_batch", "plan_shards", "split_padded"]

#: What the launch-error message tells users to run.
LAUNCH_HINT = ("launch one process per GPU with `torchrun --nproc_per_node=<GPUs> "
               "your_script.py` (`--nproc_per_node=1` for one GPU), or call "
               "torch.distributed.init_process_group() yourself before creating "
               "DataParallel")

#: Environment variables torchrun sets that env:// initialization needs.
LAUNCH_VARS = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")

#: Buffers a Program writes must be 16-byte aligned (kgraph.runtime).
_ALIGNMENT = 16


class DistributedError(KGraphError, ValueError):
    """A data-parallel run cannot go on: not launched by torchrun, a bad
    global batch size or world size, or another rank's batch was rejected."""


# --- the arithmetic (no torch, no GPU) -------------------------------------------


@dataclass(frozen=True)
class ShardPlan:
    """How a global batch of ``batch`` rows runs on ``world`` ranks in calls
    of ``per_call`` rows (see the module docstring)."""

    batch: int
    world: int
    per_call: int

    @property
    def calls(self) -> int:
        """Calls every rank makes at most: ceil(batch / (world * per_call))."""
        return -(-self.batch // (self.world * self.per_call))

    @property
    def shard(self) -> int:
        """Rows every rank receives, pad included (what is scattered)."""
        return self.calls * self.per_call

    @property
    def padded(self) -> int:
        """Rows of all shards together: world * shard."""
        return self.world * self.shard

    @property
    def padding(self) -> int:
        """Pad rows (zeros) added to the batch: padded - batch."""
        return self.padded - self.batch

    def rows(self, rank: int) -> Tuple[int, int]:
        """The global rows [start, stop) that ``rank`` owns (empty for the
        ranks after the last row)."""
        self._check_rank(rank)
        start = min(rank * self.shard, self.batch)
        return start, min(start + self.shard, self.batch)

    def real_rows(self, rank: int) -> int:
        """How many of ``rank``'s shard rows are real (not pad)."""
        start, stop = self.rows(rank)
        return stop - start

    def real_calls(self, rank: int) -> int:
        """Calls ``rank`` runs: those holding at least one real row."""
        return -(-self.real_rows(rank) // self.per_call)

    def owner(self, row: int) -> Tuple[int, int]:
        """(rank, row within its shard) of global row ``row``."""
        if not 0 <= row < self.batch:
            raise DistributedError(f"row {row} is outside the batch of "
                                   f"{self.batch} rows")
        return row // self.shard, row % self.shard

    def _check_rank(self, rank):
        if not 0 <= rank < self.world:
            raise DistributedError(f"rank {rank} is outside the world of "
                                   f"{self.world} rank(s)")

    def describe(self) -> str:
        return (f"{self.batch} rows on {self.world} rank(s): {self.calls} "
                f"call(s) of {self.per_call} rows each, {self.padding} pad "
                f"row(s)")


def _positive_int(value, what):
    if isinstance(value, bool) or not isinstance(value, int):
        raise DistributedError(f"{what} must be an integer, got "
                               f"{type(value).__name__} {value!r}")
    if value < 1:
        raise DistributedError(f"{what} must be at least 1, got {value}")
    return value


def plan_shards(batch: int, world: int, per_call: int) -> ShardPlan:
    """The :class:`ShardPlan` of a global batch of ``batch`` rows on
    ``world`` ranks whose plan takes ``per_call`` rows per call. A batch of
    0 rows is an error (there would be nothing to return)."""
    if isinstance(batch, int) and not isinstance(batch, bool) and batch == 0:
        raise DistributedError("the global batch has 0 rows: nothing to run "
                               "(DataParallel needs at least one row)")
    return ShardPlan(_positive_int(batch, "the global batch size"),
                     _positive_int(world, "the world size"),
                     _positive_int(per_call, "the rows per call"))


def _cat(parts):
    """torch.cat or numpy.concatenate along dim 0, whichever ``parts`` are."""
    if type(parts[0]).__module__.startswith("numpy"):
        import numpy as np
        return np.concatenate(parts)
    import torch
    return torch.cat(parts)


def _zeros_like_rows(x, rows):
    shape = (rows,) + tuple(x.shape[1:])
    if type(x).__module__.startswith("numpy"):
        import numpy as np
        return np.zeros(shape, dtype=x.dtype)
    import torch
    return torch.zeros(shape, dtype=x.dtype, device=x.device)


def split_padded(x, plan: ShardPlan) -> list:
    """``x`` (the global batch: ``plan.batch`` rows, torch tensor or numpy
    array) as ``plan.world`` shards of ``plan.shard`` rows each, in rank
    order, zero-padded at the end. Full shards are views of ``x``."""
    if x.shape[0] != plan.batch:
        raise ShapeError(f"the batch has {x.shape[0]} rows, the shard plan "
                         f"{plan.batch}")
    out, zeros = [], None
    for r in range(plan.world):
        start, stop = plan.rows(r)
        n = stop - start
        if n == plan.shard:
            out.append(x[start:stop])
        elif n == 0:
            if zeros is None:
                zeros = _zeros_like_rows(x, plan.shard)
            out.append(zeros)
        else:
            out.append(_cat([x[start:stop], _zeros_like_rows(x, plan.shard - n)]))
    return out


def assemble(chunks, plan: ShardPlan):
    """The global result from the ranks' result shards (``plan.world``
    chunks of ``plan.shard`` rows, in rank order): their real rows, in
    order, pad rows dropped; ``plan.batch`` rows. One chunk is returned as
    a view."""
    if len(chunks) != plan.world:
        raise DistributedError(f"expected {plan.world} result shard(s), got "
                               f"{len(chunks)}")
    parts = []
    for r, c in enumerate(chunks):
        if c.shape[0] != plan.shard:
            raise ShapeError(f"result shard of rank {r} has {c.shape[0]} rows, "
                             f"expected {plan.shard}")
        n = plan.real_rows(r)
        if n:
            parts.append(c[:n])
    return parts[0] if len(parts) == 1 else _cat(parts)


# --- the plan's batch dimension and the caller's batch ---------------------------------


def per_call_batch(spec, replicated=()) -> int:
    """Rows per call of ``spec`` (a kgraph.FunctionPlan): the leading
    dimension shared by its batched inputs (all but ``replicated``) and all
    its outputs. PlanError when the function has no such dimension."""
    name = spec.name
    replicated = set(replicated)
    bad = [i for i in replicated if not 0 <= i < len(spec.inputs)]
    if bad:
        raise PlanError(f"replicated input(s) {bad} of '{name}': it has "
                        f"{len(spec.inputs)} input(s)")
    batched = [i for i in range(len(spec.inputs)) if i not in replicated]
    if not batched:
        raise PlanError(f"'{name}' has no batched input (inputs: "
                        f"{_describe(spec.inputs) or 'none'}): nothing to "
                        f"split over GPUs")
    first = spec.inputs[batched[0]]
    if not first.shape:
        raise PlanError(f"'{name}' has no batch dimension: input "
                        f"{batched[0]} is a scalar ({first.describe()}); "
                        f"DataParallel splits dimension 0 of the inputs and "
                        f"outputs")
    b = first.shape[0]
    for i in batched[1:]:
        s = spec.inputs[i]
        if not s.shape or s.shape[0] != b:
            raise PlanError(f"'{name}' has no common batch dimension: input "
                            f"{batched[0]} is {first.describe()} ({b} rows "
                            f"per call), input {i} is {s.describe()}; pass "
                            f"replicated=[{i}] if input {i} is the same for "
                            f"every row")
    for i, s in enumerate(spec.outputs):
        if not s.shape or s.shape[0] != b:
            raise PlanError(f"output {i} of '{name}' is {s.describe()}: it has "
                            f"no batch dimension of {b} rows (that of input "
                            f"{batched[0]}, {first.describe()}), so its rows "
                            f"cannot be split over GPUs")
    return b


def _describe(specs):
    return ", ".join(s.describe() for s in specs)


def _torch_dtype(name):
    from .runtime import torch_dtype
    return torch_dtype(name)


def check_batch(spec, inputs, replicated=()) -> int:
    """Checks the global batch ``inputs`` (torch tensors or numpy arrays)
    against ``spec`` (a kgraph.FunctionPlan) and returns its row count B:
    batched inputs are [B, *plan shape[1:]] of the plan's dtype with one B
    >= 1, replicated ones exactly the plan's shape. Raises
    ArgumentCountError, DTypeError or ShapeError (kgraph errors)."""
    import numpy as np
    import torch
    from .runtime import numpy_dtype
    name = spec.name
    b = per_call_batch(spec, replicated)
    if len(inputs) != len(spec.inputs):
        raise ArgumentCountError(f"'{name}' takes {len(spec.inputs)} input(s) "
                                 f"({_describe(spec.inputs)}), got {len(inputs)}")
    rows, first = None, None
    for i, (s, x) in enumerate(zip(spec.inputs, inputs)):
        what = f"input {i} of '{name}'"
        if isinstance(x, np.ndarray):
            dtype = f"numpy.{x.dtype}"
            if s.dtype == "bf16":
                raise DTypeError(f"{what}: is bf16, which numpy cannot hold "
                                 f"(no bfloat16): pass a torch tensor")
            ok = x.dtype == numpy_dtype(s.dtype)
        elif isinstance(x, torch.Tensor):
            dtype = str(x.dtype)
            ok = x.dtype == _torch_dtype(s.dtype)
        else:
            raise DTypeError(f"{what}: expected a torch.Tensor or numpy.ndarray, "
                             f"got {type(x).__name__}")
        if not ok:
            raise DTypeError(f"{what}: expected dtype {s.dtype} "
                             f"({_torch_dtype(s.dtype)}), got {dtype} "
                             f"(DataParallel converts nothing)")
        shape = list(x.shape)
        if i in set(replicated):
            if tuple(shape) != s.shape:
                raise ShapeError(f"{what} (replicated on every rank): expected "
                                 f"shape {list(s.shape)}, got {shape}")
            continue
        want = ["B"] + list(s.shape[1:])
        if len(shape) != len(s.shape) or tuple(shape[1:]) != s.shape[1:]:
            raise ShapeError(f"{what}: expected shape {want} (any B >= 1, run in "
                             f"calls of {b} rows), got {shape}")
        if shape[0] == 0:
            raise ShapeError(f"{what}: the global batch has 0 rows (shape "
                             f"{shape}): nothing to run")
        if rows is None:
            rows, first = shape[0], i
        elif shape[0] != rows:
            raise ShapeError(f"{what}: {shape[0]} rows, but input {first} has "
                             f"{rows}: every batched input needs the same batch")
    return rows


# --- launching ------------------------------------------------------------------------


@dataclass(frozen=True)
class LaunchEnv:
    """What torchrun tells a process: its global rank, its rank on this host
    (its GPU), the number of processes, and those on this host."""

    rank: int
    local_rank: int
    world_size: int
    local_world_size: int


def launch_env(environ=None) -> LaunchEnv:
    """The :class:`LaunchEnv` from torchrun's variables in ``environ``
    (default os.environ). DistributedError saying how to launch when they
    are missing or malformed."""
    env = os.environ if environ is None else environ
    missing = [v for v in LAUNCH_VARS if not env.get(v)]
    if missing:
        raise DistributedError(f"kgraph.distributed: not launched by torchrun "
                               f"({', '.join(missing)} not set): {LAUNCH_HINT}")

    def num(var, default=None):
        text = env.get(var)
        if text in (None, ""):
            return default
        try:
            return int(text)
        except ValueError:
            raise DistributedError(f"kgraph.distributed: {var}={text!r} is not "
                                   f"an integer: {LAUNCH_HINT}") from None

    world = num("WORLD_SIZE")
    rank = num("RANK")
    if world < 1 or not 0 <= rank < world:
        raise DistributedError(f"kgraph.distributed: RANK={rank} does not fit "
                               f"WORLD_SIZE={world}: {LAUNCH_HINT}")
    local_world = num("LOCAL_WORLD_SIZE", world)
    local = num("LOCAL_RANK", rank % local_world if local_world > 0 else 0)
    if local < 0:
        raise DistributedError(f"kgraph.distributed: LOCAL_RANK={local} is "
                               f"negative: {LAUNCH_HINT}")
    return LaunchEnv(rank, local, world, local_world)


def _dist():
    import torch.distributed as dist
    if not dist.is_available():
        raise DistributedError("this torch has no torch.distributed: "
                               "kgraph.distributed needs it")
    return dist


def all_gather_into_tensor(output, input, group=None, async_op=False):
    """Every rank's ``input`` concatenated along dim 0 into ``output``, in
    rank order: ``torch.distributed.all_gather_into_tensor`` on NCCL
    (``_all_gather_base`` before torch 1.13), and the list form
    ``all_gather`` into views of ``output`` on other backends (gloo has no
    single-tensor all-gather in torch 1.13). Returns the work handle with
    ``async_op``."""
    dist = _dist()
    world = dist.get_world_size(group)
    if output.shape[0] != world * input.shape[0] or \
            tuple(output.shape[1:]) != tuple(input.shape[1:]):
        raise ShapeError(f"all_gather_into_tensor: output {list(output.shape)} is "
                         f"not {world} x input {list(input.shape)} along dim 0")
    if "nccl" not in str(dist.get_backend(group)) or not output.is_cuda:
        return dist.all_gather(list(output.chunk(world)), input, group=group,
                               async_op=async_op)
    fn = getattr(dist, "all_gather_into_tensor", None) or dist._all_gather_base
    return fn(output, input, group=group, async_op=async_op)


# --- data-parallel execution -------------------------------------------------------------


class DataParallel:
    """One plan function run data-parallel over the ranks of a process group
    (one process per GPU, started by torchrun).

    ``plan``: a launch plan path (loaded on this rank's GPU) or a loaded
    :class:`kgraph.Program` (shared as it is; it runs on the tensors'
    device). ``function``: the plan function (default: the first).

    Keyword arguments:

    - ``runner``: a callable to run instead of the Program: called as
      ``runner(*inputs)`` with one call's inputs (``per_call`` rows each, on
      ``dp.device``), returning the output or a tuple of outputs with the
      plan's shapes and dtypes. The plan still gives the signature. Tests
      use it to run without a GPU.
    - ``group``: the torch.distributed process group (default: the world);
      its rank 0 is the root that passes the batch and gets the result.
    - ``backend``: for a process group DataParallel starts: "nccl" where
      CUDA is available, else "gloo" (the default); ``timeout``: seconds.
    - ``replicated``: indices of inputs that are not split (the same tensor
      for every row, e.g. a table): broadcast from the root as they are.
    - ``cuda_graph``: run each call by replaying a CUDA graph of the
      Program (captured on first use), which saves the per-kernel launch
      cost of small per-call batches.
    - ``device``: where the calls run (default ``cuda:LOCAL_RANK``, or the
      CPU without CUDA).
    """

    def __init__(self, plan, function: Optional[str] = None, *, runner=None,
                 group=None, backend: Optional[str] = None, replicated=(),
                 cuda_graph: bool = False, timeout: Optional[float] = None,
                 device=None):
        import torch
        from .plan import load_plan
        from .runtime import Program, load
        dist = _dist()
        self._owns_group = False
        self._graph = None
        self._closed = False
        if dist.is_initialized():
            env = os.environ
            local_rank = None
            if env.get("LOCAL_RANK", "").strip().isdigit():
                local_rank = int(env["LOCAL_RANK"])
        else:
            le = launch_env()
            local_rank = le.local_rank
            if backend is None:
                backend = ("nccl" if torch.cuda.is_available()
                           and dist.is_nccl_available() else "gloo")
            kw = {}
            if timeout is not None:
                kw["timeout"] = datetime.timedelta(seconds=timeout)
            if backend == "nccl":
                self._set_cuda_device(torch, local_rank)
            dist.init_process_group(backend=backend, **kw)
            self._owns_group = True
        try:
            self._setup(torch, dist, plan, function, runner, group, replicated,
                        cuda_graph, device, local_rank, Program, load, load_plan)
        except BaseException:
            self.close()
            raise

    @staticmethod
    def _set_cuda_device(torch, local_rank):
        n = torch.cuda.device_count()
        if local_rank >= n:
            raise DistributedError(
                f"kgraph.distributed: LOCAL_RANK {local_rank} but this host has "
                f"{n} GPU(s): start at most {n} process(es) per host "
                f"(`torchrun --nproc_per_node={n}`)")
        torch.cuda.set_device(local_rank)

    def _setup(self, torch, dist, plan, function, runner, group, replicated,
               cuda_graph, device, local_rank, Program, load, load_plan):
        self.group = group
        self.rank = dist.get_rank(group)
        if self.rank < 0:
            raise DistributedError(f"this process (global rank {dist.get_rank()}) "
                                   f"is not in the process group it was given")
        self.backend = str(dist.get_backend(group))
        self.world_size = dist.get_world_size(group)
        #: The root's global rank (the group's rank 0): it passes the batch
        #: and gets the result.
        self.root = 0 if group is None else _global_rank(dist, group, 0)
        if local_rank is None:
            n = torch.cuda.device_count() if torch.cuda.is_available() else 0
            local_rank = dist.get_rank() % n if n else 0
        self.local_rank = local_rank
        if device is None and torch.cuda.is_available():
            self._set_cuda_device(torch, local_rank)
            device = torch.device("cuda", local_rank)
        elif device is None:
            device = torch.device("cpu")
        self.device = torch.device(device)
        if self.device.type == "cuda" and self.device.index is None:
            self.device = torch.device("cuda", torch.cuda.current_device())
        # Where collectives' tensors live: NCCL on the GPU, gloo on the CPU
        # (a group of both, torch 2's default "cpu:gloo,cuda:nccl", uses NCCL).
        nccl = "nccl" in self.backend
        self.comm_device = self.device if nccl else torch.device("cpu")
        if nccl and self.device.type != "cuda":
            raise DistributedError(f"the NCCL backend needs the calls on a GPU, "
                                   f"not device={self.device}")
        if self.device.type == "cuda":
            torch.cuda.set_device(self.device)
        self.replicated = tuple(sorted(set(int(i) for i in replicated)))
        if runner is not None:
            if not callable(runner):
                raise DistributedError(f"runner must be callable, got "
                                       f"{type(runner).__name__}")
            p = plan.plan if isinstance(plan, Program) else load_plan(plan)
            self.spec = (plan.spec if isinstance(plan, Program)
                         else p.function_plan(function))
            self.program = None
            self._runner = runner
        else:
            if isinstance(plan, Program):
                prog = plan if function is None else plan.function(function)
            else:
                ordinal = self.device.index if self.device.type == "cuda" \
                    else local_rank
                prog = load(plan, device=ordinal, function=function)
            self.program = prog
            self.spec = prog.spec
            self._runner = None
        #: Rows per call of the plan function.
        self.per_call = per_call_batch(self.spec, self.replicated)
        if self.program is not None:
            # Load the module and upload the parameters now: once per GPU,
            # and a missing GPU fails here rather than in the first call.
            self.program.prepare(self.device.index if self.device.type == "cuda"
                                 else self.program.device)
        self.cuda_graph = bool(cuda_graph)
        if self.cuda_graph and (self.program is None or self.device.type != "cuda"):
            raise DistributedError("cuda_graph=True needs the plan's Program "
                                   "(no runner=) on a CUDA device")

    def __repr__(self):
        return (f"<kgraph.distributed.DataParallel '{self.spec.name}' "
                f"({_describe(self.spec.inputs)}) -> ({_describe(self.spec.outputs)}), "
                f"rank {self.rank} of {self.world_size}, {self.backend}, "
                f"{self.per_call} rows per call, on {self.device}>")

    def shards(self, batch: int) -> ShardPlan:
        """The :class:`ShardPlan` of a global batch of ``batch`` rows here."""
        return plan_shards(batch, self.world_size, self.per_call)

    # --- calling -----------------------------------------------------------------

    def __call__(self, *inputs):
        """On the root: scatter the global batch ``inputs`` (one per plan
        input, B rows each for batched inputs), run every rank's shard,
        gather the results; returns the output (or a tuple) of B rows on the
        device of the root's first batched input (numpy in, numpy out).
        Every rank of the group must call it; the others' arguments are
        ignored (pass nothing) and they return None."""
        import torch
        dist = _dist()
        self._check_open()
        root = self.rank == 0
        error, rows, kind = None, 0, None
        if root:
            try:
                rows = check_batch(self.spec, inputs, self.replicated)
                kind = self._caller_kind(inputs)
            except KGraphError as e:
                error = e
        # Every rank learns the batch size (or that the root rejected it,
        # so that no rank waits in a collective the root never joins).
        header = torch.tensor([1 if error else 0, rows], dtype=torch.int64,
                              device=self.comm_device)
        dist.broadcast(header, src=self.root, group=self.group)
        if error is not None:
            raise error
        status, rows = header.tolist()
        if status:
            raise DistributedError(f"rank 0 of the group rejected its batch "
                                   f"(its error says why); rank {self.rank} "
                                   f"ran nothing")
        plan = self.shards(rows)
        shards = []
        for i, s in enumerate(self.spec.inputs):
            dtype = _torch_dtype(s.dtype)
            x = self._to_comm(inputs[i]) if root else None
            if i in self.replicated:
                t = x.contiguous() if root else torch.empty(
                    s.shape, dtype=dtype, device=self.comm_device)
                dist.broadcast(t, src=self.root, group=self.group)
            else:
                t = torch.empty((plan.shard,) + tuple(s.shape[1:]), dtype=dtype,
                                device=self.comm_device)
                parts = ([p.contiguous() for p in split_padded(x, plan)]
                         if root else None)
                dist.scatter(t, parts, src=self.root, group=self.group)
            shards.append(t)
        outs = self._run_shard(shards, plan.real_rows(self.rank))
        results = []
        for o in outs:
            o = o.to(self.comm_device)
            chunks = ([torch.empty_like(o) for _ in range(self.world_size)]
                      if root else None)
            dist.gather(o, chunks, dst=self.root, group=self.group)
            if root:
                results.append(self._to_caller(assemble(chunks, plan), kind))
        if not root:
            return None
        return results[0] if len(results) == 1 else tuple(results)

    def run_local(self, *inputs):
        """Run this rank's own rows, no communication: batched inputs of any
        n >= 1 rows (replicated ones as the plan has them) in ceil(n / b)
        calls, the last one zero-padded; returns n rows per output on the
        first batched input's device (numpy in, numpy out)."""
        self._check_open()
        rows = check_batch(self.spec, inputs, self.replicated)
        kind = self._caller_kind(inputs)
        calls = -(-rows // self.per_call)
        shards = []
        for i, x in enumerate(inputs):
            x = self._as_tensor(x).to(self.device)
            if i not in self.replicated and rows != calls * self.per_call:
                x = _cat([x, _zeros_like_rows(x, calls * self.per_call - rows)])
            shards.append(x.contiguous())
        outs = self._run_shard(shards, rows)
        outs = [self._to_caller(o[:rows], kind) for o in outs]
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _run_shard(self, shards, real_rows):
        """Runs the calls of a shard (batched tensors of calls * b rows) that
        hold real rows; returns the outputs, shard-sized, on self.device
        (pad calls' rows left unwritten: they are dropped)."""
        import torch
        b = self.per_call
        shards = [s.to(self.device) for s in shards]
        batched = [i not in self.replicated for i in range(len(shards))]
        shard_rows = next(s.shape[0] for s, bt in zip(shards, batched) if bt)
        outs = [torch.empty((shard_rows,) + tuple(o.shape[1:]),
                            dtype=_torch_dtype(o.dtype), device=self.device)
                for o in self.spec.outputs]
        for k in range(-(-real_rows // b)):
            xs = [s[k * b:(k + 1) * b] if bt else s
                  for s, bt in zip(shards, batched)]
            self._call(xs, [o[k * b:(k + 1) * b] for o in outs])
        return outs

    def _call(self, xs, outs):
        """One call: ``xs`` (per_call rows each) into ``outs`` (views)."""
        if self._runner is not None:
            res = self._runner(*xs)
            res = tuple(res) if isinstance(res, (tuple, list)) else (res,)
            if len(res) != len(outs):
                raise ArgumentCountError(f"runner returned {len(res)} output(s), "
                                         f"'{self.spec.name}' has {len(outs)}")
            for i, (o, r) in enumerate(zip(outs, res)):
                if tuple(r.shape) != tuple(o.shape) or r.dtype != o.dtype:
                    raise ShapeError(f"runner output {i}: expected {o.dtype}"
                                     f"{list(o.shape)}, got {r.dtype}"
                                     f"{list(r.shape)}")
                o.copy_(r)
            return
        prog = self.program
        if self.device.type != "cuda":
            # Without CUDA in torch the Program runs on numpy views of the
            # tensors (it stages them through its own device).
            prog.run([x.numpy() for x in xs], [o.numpy() for o in outs])
            return
        if self.cuda_graph:
            if self._graph is None:
                self._graph = prog.capture(*xs)
            g = self._graph
            for buf, x in zip(g.inputs, xs):
                buf.copy_(x)
            g.replay()
            for o, r in zip(outs, g.outputs):
                o.copy_(r)
            return
        if all(o.data_ptr() % _ALIGNMENT == 0 for o in outs):
            prog.run(xs, outs)
        else:  # a view the runtime cannot write into: run, then copy
            res = prog(*xs)
            res = res if isinstance(res, tuple) else (res,)
            for o, r in zip(outs, res):
                o.copy_(r)

    # --- tensors ------------------------------------------------------------------

    @staticmethod
    def _as_tensor(x):
        import torch
        return torch.from_numpy(x) if not isinstance(x, torch.Tensor) else x

    def _caller_kind(self, inputs):
        """Where results go: the first batched input's device, or "numpy"."""
        import torch
        x = next(x for i, x in enumerate(inputs) if i not in self.replicated)
        return x.device if isinstance(x, torch.Tensor) else "numpy"

    def _to_comm(self, x):
        return self._as_tensor(x).to(self.comm_device)

    @staticmethod
    def _to_caller(t, kind):
        if kind == "numpy":
            return t.cpu().numpy()
        return t.to(kind)

    # --- lifetime -----------------------------------------------------------------

    def _check_open(self):
        if self._closed:
            raise DistributedError("this DataParallel was closed")

    def close(self):
        """Free the CUDA graph and end the process group if DataParallel
        started it (a caller's group is left as it is)."""
        if self._closed:
            return
        self._closed = True
        if self._graph is not None:
            self._graph.close()
            self._graph = None
        if self._owns_group:
            self._owns_group = False
            dist = _dist()
            if dist.is_initialized():
                dist.destroy_process_group()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _global_rank(dist, group, rank):
    fn = getattr(dist, "get_global_rank", None)
    if fn is None:
        fn = dist.distributed_c10d._get_global_rank
    return fn(group, rank)
