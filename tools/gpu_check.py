"""GPU check: the conformance cases run through ``backend="jax"`` on a GPU, timed.

    python tools/gpu_check.py                    # every case the JAX backend runs
    python tools/gpu_check.py --limit 200        # the first 200 of them
    python tools/gpu_check.py --transforms grad vmap_grad
    python tools/gpu_check.py --allow-cpu        # the same run on JAX's CPU (no GPU)

Where JAX or a GPU is missing it prints why and exits 0 (it is a check to run where
``jax[cuda]`` is installed, not a failure elsewhere).  Otherwise each conformance case
(``s2s/tools/conformance.py``: recorded JAX results) whose transform the JAX backend runs
(value, grad, vmap, vmap(grad)) is run as ``s2s.jit(..., backend="jax")`` on the
device, compared with the recorded answer, and timed: the first call (transform,
trace and compile) and the steady state (median of repeated calls, each waited on).
It prints a line per transform and the cases that failed; the exit status is 1 if
any case failed, else 0.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Any

BACKEND_TRANSFORMS = ("value", "grad", "vmap", "vmap_grad")


def gpu_status(allow_cpu: bool = False) -> tuple[Any, str | None]:
    """``(device, None)`` where the check can run, else ``(None, why not)``."""
    try:
        import jax
    except ImportError:
        return None, "JAX is not installed (pip install s2s[jax] 'jax[cuda12]')"
    try:
        gpus = jax.devices("gpu")
    except RuntimeError as err:
        gpus = []
        reason = f"no GPU visible to JAX {jax.__version__} ({str(err).splitlines()[0]})"
    else:
        reason = f"no GPU visible to JAX {jax.__version__}"
    if gpus:
        return gpus[0], None
    if allow_cpu:
        return jax.devices("cpu")[0], None
    return None, reason


def _python_int_positions(args: Any) -> tuple[int, ...]:
    return tuple(i for i, a in enumerate(args) if type(a) is int)


def jitted_case(case: dict, fn: Any) -> tuple[Any, tuple]:
    """The case's transform as ``s2s.jit(..., backend="jax")``, and its arguments."""
    import s2s

    kind = case["transform"]
    argnums = case.get("argnums", 0)
    argnums = tuple(argnums) if isinstance(argnums, list) else argnums
    if kind == "value":
        return (lambda inputs: (fn, inputs["args"])), ()
    if kind == "grad":
        return (lambda inputs: (s2s.grad(fn, argnums=argnums,
                                         has_aux=case.get("has_aux", False)),
                                inputs["args"])), ()
    if kind == "vmap":
        return (lambda inputs: (s2s.vmap(fn, in_axes=tuple(case["in_axes"])),
                                inputs["batched"])), ()
    if kind == "vmap_grad":
        return (lambda inputs: (s2s.vmap(s2s.grad(fn, argnums=argnums),
                                         in_axes=tuple(case["in_axes"])),
                                inputs["batched"])), ()
    raise ValueError(kind)


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return (lines[0] if lines else type(exc).__name__)[:200]


def run_case(corpus: Any, case: dict, device: Any, repeats: int) -> dict:
    import warnings

    import jax

    import s2s
    from s2s.errors import TransformError
    from s2s.tools import conformance

    out = {"id": case["id"], "transform": case["transform"], "status": "pass",
           "detail": "", "first": None, "steady": None}
    inputs = corpus.inputs(case)
    try:
        fn = getattr(conformance.load_module(corpus.root / case["module"]),
                     case["function"])
        make, _ = jitted_case(case, fn)
        transform, args = make(inputs)
        args = tuple(args)
        g = s2s.jit(transform, backend="jax",
                    static_argnums=_python_int_positions(args) or None)
        with jax.default_device(device), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            start = time.perf_counter()
            got = jax.block_until_ready(g(*args))
            out["first"] = time.perf_counter() - start
            times = []
            for _ in range(repeats):
                start = time.perf_counter()
                jax.block_until_ready(g(*args))
                times.append(time.perf_counter() - start)
            out["steady"] = statistics.median(times) if times else None
    except (TransformError, NotImplementedError) as exc:
        out["status"], out["detail"] = "unsupported", _first_line(exc)
        return out
    except Exception as exc:  # noqa: BLE001 - a crash is a failure, reported
        out["status"] = "fail"
        out["detail"] = f"{type(exc).__name__}: {_first_line(exc)}"
        return out
    got = conformance._to_numpy(got)
    diff = conformance.compare(got, corpus.expected(case), conformance._tol(inputs))
    if diff is not None:
        out["status"], out["detail"] = "fail", diff
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None,
                        help="run at most this many cases")
    parser.add_argument("--transforms", nargs="*", default=list(BACKEND_TRANSFORMS),
                        choices=BACKEND_TRANSFORMS)
    parser.add_argument("--repeats", type=int, default=5,
                        help="steady-state calls timed per case")
    parser.add_argument("--allow-cpu", action="store_true",
                        help="run on JAX's CPU when there is no GPU")
    opts = parser.parse_args(argv)

    device, why = gpu_status(opts.allow_cpu)
    if device is None:
        print(f"gpu_check: skipped: {why}")
        return 0
    import jax

    jax.config.update("jax_enable_x64", True)
    from s2s.tools import conformance

    try:
        corpus = conformance.load()
    except FileNotFoundError as err:
        print(f"gpu_check: skipped: {err}")
        return 0
    cases = [c for c in corpus.cases if c["transform"] in opts.transforms]
    if opts.limit is not None:
        cases = cases[:opts.limit]
    print(f"gpu_check: {len(cases)} conformance cases on {device} "
          f"(JAX {jax.__version__}, backend='jax')")
    results = []
    for k, case in enumerate(cases, 1):
        results.append(run_case(corpus, case, device, opts.repeats))
        if k % 100 == 0:
            print(f"  {k}/{len(cases)}", flush=True)
    print(f"{'transform':<10} {'cases':>6} {'pass':>6} {'fail':>5} {'unsupp':>7} "
          f"{'first call ms (median)':>23} {'steady us (median)':>19}")
    for kind in opts.transforms:
        rs = [r for r in results if r["transform"] == kind]
        if not rs:
            continue
        count = {s: sum(r["status"] == s for r in rs) for s in ("pass", "fail",
                                                                 "unsupported")}
        first = [r["first"] for r in rs if r["first"] is not None]
        steady = [r["steady"] for r in rs if r["steady"] is not None]
        f_ms = f"{statistics.median(first) * 1e3:.1f}" if first else "-"
        s_us = f"{statistics.median(steady) * 1e6:.1f}" if steady else "-"
        print(f"{kind:<10} {len(rs):>6} {count['pass']:>6} {count['fail']:>5} "
              f"{count['unsupported']:>7} {f_ms:>23} {s_us:>19}")
    failed = [r for r in results if r["status"] == "fail"]
    for r in failed[:50]:
        print(f"FAIL {r['id']}: {r['detail']}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
