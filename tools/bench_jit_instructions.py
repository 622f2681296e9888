"""Instructions per call of ``s2s.jit(..., backend="jax")`` against ``jax.jit``, counted
by valgrind's callgrind: a measure a loaded machine does not disturb.

    PYTHONPATH=<tree> python tools/bench_jit_instructions.py                # the wide cells
    PYTHONPATH=<tree> python tools/bench_jit_instructions.py logistic:vmap tanh_sq:hvp:f32
    PYTHONPATH=<tree> python tools/bench_jit_instructions.py --calls 200 --all-float32
    PYTHONPATH=<tree> python tools/bench_jit_instructions.py --per-example  # + vmap(grad)
    PYTHONPATH=<tree> python tools/bench_jit_instructions.py --numpy tanh_sq:hvp attention:grad:f32

Wall-clock ratios of two ~20 µs calls swing by ±10 % and more when other processes
share the cores (``bench_cell.py``'s quartiles).  The number of instructions a call
executes does not: this re-runs itself under ``valgrind --tool=callgrind`` with
instrumentation off (the imports, traces and XLA compiles run uninstrumented), warms
each system up, then counts the instructions of ``--calls`` calls of ``jax.jit`` and
of ``s2s.jit(jax)`` twice each (``--rounds``), in turn (workloads and transforms as
``tools/bench_wide.py`` makes them).  XLA runs single-threaded and JAX dispatches
synchronously (``--xla_cpu_multi_thread_eigen=false``, ``jax_cpu_enable_async_dispatch``
off): an idle thread pool's spinning would otherwise be counted, and the computation
is counted on the calling thread.  The two counts of one system agree to about
0.1 %, except where glibc's ``malloc_consolidate`` runs in one count and not in the
other (3-4k instructions per call of a small cell, from the heap's state): the last
column is the ratio without it, and ``--rounds 4`` tells a real difference from that.
Instructions are not time (a float64 and a float32 loop of the same length
differ in time, not much in count; cache misses cost nothing here), so this is a
check of the Python around the call and of the compiled program's length, beside the
timings.  Cells: ``name:kind``, ``name:kind:f32`` (float64 arguments as float32),
``name:kind:small`` (``make_small_args``: a batch of 4, 8 elements; ``:small:f32`` too),
``name:grad:f32:strong`` (JAX's twin given NumPy's strong float64 ``np.sqrt`` of an
int, the program NumPy runs: ``attention:grad:f32:strong``), and the
per-example gradients of ``tools/bench_vmap.py`` at a batch size, ``linreg:b8``,
``mlp:b64:f32`` (``vmap(grad)``, ``in_axes=(None, 0, 0)``; ``--per-example`` adds
:data:`PER_EXAMPLE` to the wide cells), ``tools/bench_jit_lanes.py``'s jits of a loss
calling a helper function as ``lanes:KIND[:f32][:inline|:free]`` (``lanes:dict``,
``lanes:vmap:f32:inline``: KIND one of bare, static, dict, vmap, vmap_dict; the
helper's guarded lane, or the loss written inline, or the free path's frame), and the loops of
``tools/bench_loop_workloads.py`` as ``loop:NAME`` (``loop:rnn``, ``loop:long_rnn``).
With ``--numpy`` the pair is the hand-written NumPy function and ``s2s``'s transform (the
code specialized to the signature, NumPy backend): the wide table's s2s / hand-written,
counted (BLAS on one thread).
Needs valgrind and a C compiler (the client requests that switch counting on and
off are compiled into a small library on first use).
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CELLS = ["xent_onehot:grad", "xent_int:grad", "smoothed:grad", "attention:grad",
         "attention_masked:grad", "layer_norm:grad", "mixture:grad", "gp_nll:grad",
         "logistic:vmap", "tanh_sq:hvp", "mlp_dict:grad", "lstm:grad"]
PER_EXAMPLE = ["linreg:b1", "linreg:b8", "linreg:b64", "mlp:b1", "mlp:b8", "mlp:b64"]
CLIENT = r"""
#include <valgrind/callgrind.h>
void cg_start(void) { CALLGRIND_ZERO_STATS; CALLGRIND_START_INSTRUMENTATION; }
void cg_dump(const char *name) { CALLGRIND_DUMP_STATS_AT(name); }
void cg_stop(void) { CALLGRIND_STOP_INSTRUMENTATION; }
"""


def client_library(folder: str) -> str:
    path = os.path.join(folder, "libcgclient.so")
    source = os.path.join(folder, "cgclient.c")
    with open(source, "w") as f:
        f.write(CLIENT)
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", path, source], check=True)
    return path


def _float32(value):
    import numpy as np

    if isinstance(value, dict):
        return {k: _float32(v) for k, v in value.items()}
    value = np.asarray(value)
    return value.astype(np.float32) if value.dtype == np.float64 else value


def per_example(name: str, batch: int) -> tuple:
    """``(args, jax.jit(jax.vmap(jax.grad(f))), s2s.jit(s2s.vmap(s2s.grad(f)), backend=
    "jax"))`` for ``tools/bench_vmap.py``'s ``linreg`` or ``mlp`` at ``batch`` examples,
    their results checked against its hand-written formula."""
    import types

    import bench_vmap as V
    import jax
    import jax.numpy as jnp
    import numpy as np

    import s2s

    rng = np.random.default_rng(0)
    if name == "linreg":
        args = (rng.normal(size=16), rng.normal(size=(batch, 16)), rng.normal(size=batch))
    else:
        args = ({"w1": rng.normal(size=(16, 32)), "w2": rng.normal(size=(32, 4))},
                rng.normal(size=(batch, 16)), rng.normal(size=(batch, 4)))
    fn = getattr(V, name)
    twin = types.FunctionType(fn.__code__, {**fn.__globals__, "np": jnp}, name)
    theirs = jax.jit(jax.vmap(jax.grad(twin), in_axes=(None, 0, 0)))
    ours = s2s.jit(s2s.vmap(s2s.grad(fn), in_axes=(None, 0, 0)), backend="jax")
    want = getattr(V, name + "_hand")(*args)
    for fn_ in (theirs, ours):
        got = fn_(*args)
        for a, b in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(np.asarray(a), b, rtol=1e-9, atol=1e-12)
    return args, theirs, ours


def loop_pair(name: str) -> tuple:
    """``(args, jax.jit(jax.grad(f)), s2s.jit(s2s.grad(f), backend="jax"))`` for a loop
    of tools/bench_loop_workloads.py, the two results checked against each other."""
    import types

    import bench_loop_workloads as LW
    import jax
    import jax.numpy as jnp
    import numpy as np

    import s2s

    fn, args = LW.FUNCTIONS[name], LW.make_args(name)
    twin = types.FunctionType(fn.__code__, {**fn.__globals__, "np": jnp}, fn.__name__)
    theirs = jax.jit(jax.grad(twin))
    ours = s2s.jit(s2s.grad(fn), backend="jax")
    for _ in range(3):
        got, want = ours(*args), theirs(*args)
    for a, b in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-9, atol=1e-12)
    return args, theirs, ours


def _strong_twin(name: str):
    """``jax.jit(jax.grad(...))`` of the workload's twin whose ``np.sqrt`` of a Python
    number is a float64 NumPy scalar's, as NumPy's is (``np.sqrt(q.shape[1])``: a
    strong float64, so NumPy, and s2s after it, divide float32 scores in float64,
    where ``jnp.sqrt(16)`` is weak and keeps them float32): the cell ``NAME:grad:f32:
    strong`` times the program NumPy runs on both sides."""
    import types

    import bench_wide_workloads as W
    import jax
    import jax.numpy as jnp
    import numpy as np

    names = types.SimpleNamespace(**{k: getattr(jnp, k) for k in dir(jnp)
                                     if not k.startswith("__")})
    names.sqrt = lambda x: jnp.sqrt(np.float64(x) if type(x) in (int, float) else x)
    return jax.jit(jax.grad(W.twin(names)[name]))


def cell_pair(cell: str, numpy: bool = False) -> tuple:
    """``(args, jax.jit's function, s2s.jit(jax)'s)`` of one cell (``numpy``: the
    hand-written NumPy function's and ``s2s``'s, the NumPy backend's specialized code)."""
    import bench_wide as BW
    import bench_wide_workloads as W

    name, kind, *rest = cell.split(":")
    if name == "lanes":  # (tools/bench_jit_lanes.py: lanes:dict, lanes:vmap:f32:inline)
        import bench_jit_lanes as BL
        import numpy as np

        system = next((r for r in rest if r in ("inline", "free")), "helper")
        return BL.pair(kind, np.float32 if "f32" in rest else np.float64, system)
    if name == "loop":  # (tools/bench_loop_workloads.py: loop:rnn, loop:gru, ...)
        if numpy:
            raise SystemExit(f"{cell}: the loop cells have no hand-written NumPy function")
        return loop_pair(kind)
    if kind.startswith("b") and kind[1:].isdigit():
        args, theirs, ours = per_example(name, int(kind[1:]))
    else:
        args = W.make_small_args(name) if "small" in rest else W.make_args(name)
        systems = BW.systems_for(name, kind)
        theirs, ours = (systems["hand"], systems["s2s"]) if numpy else (
            systems["jax.jit"], systems["s2s.jit(jax)"])
        if "strong" in rest and not numpy and kind == "grad":
            theirs = _strong_twin(name)
    if "f32" in rest:
        args = tuple(_float32(a) for a in args)
    return args, theirs, ours


def count(cells: list[str], calls: int, library: str, numpy: bool = False,
          rounds: int = 2) -> None:
    """Under callgrind: each cell's systems, counted ``rounds`` times each, in turn."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"
    os.environ.setdefault("S2S_SPECIALIZE", "sync")  # (warm-up calls run the specialized code)
    os.environ["XLA_FLAGS"] = ("--xla_cpu_multi_thread_eigen=false "
                               "intra_op_parallelism_threads=1")
    sys.path[:0] = [HERE, os.path.dirname(HERE)]
    import jax

    jax.config.update("jax_cpu_enable_async_dispatch", False)
    jax.config.update("jax_enable_x64", True)

    cg = ctypes.CDLL(library)
    for cell in cells:
        args, theirs, ours = cell_pair(cell, numpy)
        pair = ((THEIRS[numpy], theirs), (OURS[numpy], ours))
        for _ in range(5):
            for _, fn in pair:
                jax.block_until_ready(fn(*args))
        for round_ in range(rounds):
            for label, fn in pair:
                cg.cg_start()
                for _ in range(calls):
                    out = fn(*args)
                jax.block_until_ready(out)
                cg.cg_dump(f"{cell}|{label}|{round_}".encode())
                cg.cg_stop()


THEIRS = {False: "jax.jit", True: "hand"}
OURS = {False: "s2s.jit(jax)", True: "s2s"}


def _unconsolidated(path: str) -> int:
    """The instructions of a count less glibc's ``malloc_consolidate``: whether a count
    meets it depends on the heap's state, not on the system (3-4k per call of a small
    cell in one count of a system and none in the other)."""
    text = subprocess.run(["callgrind_annotate", "--threshold=100", path],
                          capture_output=True, text=True).stdout
    total = inside = 0
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+) \([^)]*\)\s+(.*)", line)
        if m:
            n = int(m.group(1).replace(",", ""))
            if "PROGRAM TOTALS" in m.group(2):
                total = n
            elif "malloc.c:malloc_consolidate " in m.group(2):
                inside += n
    return total - inside


def report(folder: str, calls: int, cells: list[str], numpy: bool = False) -> None:
    found: dict[str, dict[str, list[float]]] = {}
    bare: dict[str, dict[str, list[float]]] = {}  # (less malloc_consolidate)
    for path in glob.glob(os.path.join(folder, "callgrind.out.*")):
        with open(path) as f:
            text = f.read()
        trigger = re.search(r"Trigger: Client Request: (\S+)", text)
        totals = re.search(r"^totals: (\d+)", text, re.M)
        if trigger and totals:
            cell, label, _ = trigger.group(1).split("|")
            found.setdefault(cell, {}).setdefault(label, []).append(
                int(totals.group(1)) / calls)
            bare.setdefault(cell, {}).setdefault(label, []).append(
                _unconsolidated(path) / calls)
    counts = len(next(iter(next(iter(found.values())).values()))) if found else 0
    print(f"instructions per call (callgrind, {calls} calls, {counts} counts each: the "
          "least and the most; 'unconsol.': the ratio of the least of each less glibc's "
          "malloc_consolidate)")
    theirs_, ours_ = THEIRS[numpy], OURS[numpy]
    print(f"{'cell':28s} {theirs_:>20s} {ours_:>20s} {'ratio':>7s} {'difference':>10s} "
          f"{'unconsol.':>9s}")
    ratios, unconsolidated_ratios = [], []
    for cell in cells:
        got = found.get(cell)
        if not got or len(got) < 2:
            print(f"{cell:28s} (no count: the cell failed, see above)")
            continue
        j, s = got[theirs_], got[ours_]
        ratio = min(s) / min(j)
        unconsolidated = min(bare[cell][ours_]) / min(bare[cell][theirs_])
        ratios.append(ratio)
        unconsolidated_ratios.append(unconsolidated)
        print(f"{cell:28s} {min(j) / 1e3:>9.1f}k, {max(j) / 1e3:.1f}k {min(s) / 1e3:>9.1f}k, "
              f"{max(s) / 1e3:.1f}k {ratio:>7.3f} {(min(s) - min(j)) / 1e3:>+9.1f}k "
              f"{unconsolidated:>9.3f}")
    if ratios:
        ratios.sort()
        print(f"ratio: median {ratios[len(ratios) // 2]:.3f}, worst {ratios[-1]:.3f}")
        unconsolidated_ratios.sort()
        print(f"less malloc_consolidate: median "
              f"{unconsolidated_ratios[len(ratios) // 2]:.3f}, worst {unconsolidated_ratios[-1]:.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cells", nargs="*", help="name:kind or name:kind:f32")
    ap.add_argument("--calls", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=2,
                    help="counts of each system (in turn; the report takes the least)")
    ap.add_argument("--all-float32", action="store_true",
                    help="every cell with its float64 arguments as float32")
    ap.add_argument("--small", action="store_true",
                    help="every cell at the small sizes of make_small_args")
    ap.add_argument("--per-example", action="store_true",
                    help="the per-example cells too (vmap(grad) at batch 1, 8 and 64)")
    ap.add_argument("--numpy", action="store_true",
                    help="the hand-written NumPy function against s2s's (specialized) "
                    "transform instead")
    ap.add_argument("--keep", metavar="DIR",
                    help="leave callgrind's output files in DIR (one per cell and system "
                    "and count, the trigger naming it: `callgrind_annotate FILE` gives "
                    "the instructions by function)")
    ap.add_argument("--inside", help=argparse.SUPPRESS)  # (the run under valgrind)
    opts = ap.parse_args()
    cells = opts.cells or [
        c + (":small" if opts.small and c in CELLS else "") +
        (":f32" if opts.all_float32 else "")
        for c in CELLS + (PER_EXAMPLE if opts.per_example else [])]
    if opts.inside:
        count(cells, opts.calls, opts.inside, opts.numpy, opts.rounds)
        return
    with tempfile.TemporaryDirectory() as scratch:
        folder = opts.keep or scratch
        os.makedirs(folder, exist_ok=True)
        library = client_library(folder)
        command = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "-q",
                   f"--callgrind-out-file={folder}/callgrind.out.%p", sys.executable,
                   os.path.abspath(__file__), "--calls", str(opts.calls), "--rounds", str(opts.rounds),
                   *(["--numpy"] if opts.numpy else []), "--inside", library, *cells]
        subprocess.run(command, check=True)
        report(folder, opts.calls, cells, opts.numpy)


if __name__ == "__main__":
    main()
