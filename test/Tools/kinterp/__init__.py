"""A CPU interpreter of the kernels kgraph emits (the `--emit=gpu` IR in
generic form), for checking generated kernels without a GPU.

    from kinterp.plan import Module, run_plan
    outputs, unwritten = run_plan(plan["functions"][0], Module(ir_text), inputs)

See interp.py (execution model), ops_warp.py (shuffles, ldmatrix,
mma.sync) and ops_async.py (cp.async, wgmma, mbarriers, TMA).
"""
