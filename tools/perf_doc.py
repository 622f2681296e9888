"""Regenerate the measured tables of docs/performance.md in one command.

    python tools/perf_doc.py            # measure everything, rewrite the page's tables
    python tools/perf_doc.py --quick    # fewer repeats (a check that it runs, ~3 min)
    python tools/perf_doc.py --print    # measure, print the blocks, leave the page

What it runs, in one process, BLAS on one thread, JAX computing on the calling thread
before a call returns (``bench_wide.sync_jax``: otherwise a JAX call's computation runs
into the next system's time), each table's repeats interleaved (every system timed once
per repeat, in turn) after a warm-up that also checks every system's result against
the hand-written gradient:

- ``machine``: the CPU, cores, versions, the commit, and the load average before and
  after the run (the machine may be shared: the page says how loaded it was);
- ``grad``: tools/bench.py's gradient table, with the spread of each cell's
  s2s.grad / hand-written ratio over the repeats;
- ``wide``: tools/bench_wide.py's twelve formulations, with the spread;
- ``ablation``: tools/bench_ablate.py, every pass of the specializer switched off in
  turn (``S2S_PASSES_OFF``) on every workload of both.

Each block sits in docs/performance.md between ``<!-- perf_doc:NAME -->`` and
``<!-- /perf_doc:NAME -->``; the prose around them is left as it is.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import io
import os
import platform
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PAGE = os.path.join(ROOT, "docs", "performance.md")
BLOCKS = ("machine", "grad", "wide", "ablation")


def replace_blocks(page: str, blocks: dict[str, str]) -> str:
    """``page`` with each named block's text replaced (markers kept); a block the
    page lacks is an error (the page names where each table goes)."""
    for name, text in blocks.items():
        pattern = re.compile(rf"(<!-- perf_doc:{name} -->\n).*?(<!-- /perf_doc:{name} -->)",
                             re.S)
        if not pattern.search(page):
            raise KeyError(f"docs/performance.md has no <!-- perf_doc:{name} --> block")
        page = pattern.sub(lambda m: m.group(1) + text.rstrip("\n") + "\n" + m.group(2),
                           page)
    return page


def _version(module: str) -> str:
    from importlib import metadata

    try:  # (the distribution's version: autograd and egglog have no __version__)
        return metadata.version(module)
    except metadata.PackageNotFoundError:  # not installed: its columns are left out
        return "not installed"


def machine(load_before: tuple, load_after: tuple, seconds: float, quick: bool) -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next(ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    try:
        commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True).stdout.strip()
    except OSError:
        commit = "?"
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return "\n".join([
        f"Measured {when} by `python tools/perf_doc.py{' --quick' if quick else ''}` "
        f"(commit {commit}, {seconds / 60:.1f} minutes).",
        f"Machine: {cpu}, {os.cpu_count()} cores; Python {platform.python_version()}, "
        f"NumPy {_version('numpy')}, JAX {_version('jax')}, autograd "
        f"{_version('autograd')}, egglog {_version('egglog')}; BLAS on one thread; JAX "
        "computing on the calling thread before a call returns (async dispatch off).",
        f"Load average (1, 5, 15 min) before the run: "
        f"{', '.join(f'{x:.2f}' for x in load_before)}; after: "
        f"{', '.join(f'{x:.2f}' for x in load_after)}. On a shared machine a load above "
        f"the {os.cpu_count()} cores stretches every system's time; the repeats are "
        "interleaved so the ratios suffer less than the times, and each table gives "
        "their spread.",
    ])


def grad_block(quick: bool) -> str:
    import bench

    rows, failed = bench.run(quick)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        bench.print_markdown(rows, failed, bench.lengths(), bench.latency(),
                             bench.summary(rows))
    spreads = ", ".join(f"{n} {s} {lo:.2f}–{hi:.2f}"
                        for (n, s), (lo, hi) in bench.SPREAD.items())
    return out.getvalue() + (
        f"\nSpread: the least and greatest s2s.grad / hand-written ratio of one repeat "
        f"({5 if quick else 15} repeats): {spreads}.\n")


def wide_block(quick: bool) -> str:
    import bench_wide

    rows, failed = bench_wide.run(quick)
    systems = bench_wide.SYSTEMS
    lines = ["| workload | kind | " + " | ".join(systems) + " |",
             "|---|---|" + "---:|" * len(systems)]
    for name, kind, t in rows:
        lines.append(f"| {name} | {kind} | " + " | ".join(
            bench_wide.cell(t.get(s), t["hand"]) for s in systems) + " |")
    ratios = [t["s2s"] / t["hand"] for _, _, t in rows if "s2s" in t]
    worst = max(rows, key=lambda r: r[2].get("s2s", 0) / r[2]["hand"])
    lines.append(f"\ns2s / hand-written: median **{statistics.median(ratios):.2f}**, worst "
                 f"**{max(ratios):.2f}** ({worst[0]}); cells above 1.5: "
                 + (", ".join(f"{n} {t['s2s'] / t['hand']:.2f}" for n, _, t in rows
                              if "s2s" in t and t["s2s"] / t["hand"] > 1.5) or "none") + ".")
    jits = [(n, statistics.median(r), r) for n, r in bench_wide.JIT_RATIOS.items()]
    if jits:
        lines.append(f"s2s.jit(backend='jax') / jax.jit, the median of each cell's "
                     f"per-repeat ratio (the two timed next to each other, each call "
                     f"waited on): median **{statistics.median(m for _, m, _ in jits):.2f}**, "
                     f"worst **{max(m for _, m, _ in jits):.2f}**; cells above 1.05: "
                     + (", ".join(f"{n} {m:.2f} ({r[0]:.2f}–{r[-1]:.2f})"
                                  for n, m, r in jits if m > 1.05) or "none") + ".")
    lines.append("\nSpread: the least and greatest ratio of one repeat "
                 f"({5 if quick else 15} repeats), s2s / hand-written: " + ", ".join(
                     f"{n} {s['s2s'][0]:.2f}–{s['s2s'][1]:.2f}"
                     for n, s in bench_wide.SPREAD.items() if "s2s" in s) + ".")
    for name, sname, why in failed:
        lines.append(f"\n- not timed: {name} {sname}: {why}")
    return "\n".join(lines) + "\n"


def ablation_block(quick: bool) -> str:
    import bench_ablate

    rows, wrong = bench_ablate.ablate(quick)
    text = bench_ablate.table(rows, markdown=True) + "\n"
    if wrong:  # a pass switched off changed a value: say so on the page
        text += "\n" + "\n".join(f"- VALUES DIFFER: {w}" for w in wrong) + "\n"
    return text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--print", action="store_true", help="print the blocks; keep the page")
    opts = ap.parse_args()
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"
    os.environ["S2S_SPECIALIZE"] = "sync"  # the warm-up calls leave the code specialized
    sys.path[:0] = [HERE, ROOT]  # this tree's tools and s2s
    import bench_wide

    bench_wide.sync_jax()  # (JAX computes before a call returns, in every table)
    start, load_before = time.perf_counter(), os.getloadavg()
    blocks = {}
    for name, make in (("grad", grad_block), ("wide", wide_block),
                       ("ablation", ablation_block)):
        blocks[name] = make(opts.quick)
        # (each block as it is measured: a run cut short still leaves its tables)
        print(f"<!-- perf_doc:{name} ({(time.perf_counter() - start) / 60:.1f} min, load "
              f"{os.getloadavg()[0]:.1f}) -->\n{blocks[name]}", file=sys.stderr, flush=True)
    blocks["machine"] = machine(load_before, os.getloadavg(), time.perf_counter() - start,
                                opts.quick)
    if opts.print:
        for name in BLOCKS:
            print(f"<!-- perf_doc:{name} -->\n{blocks[name]}")
        return
    with open(PAGE, encoding="utf-8") as fh:
        page = fh.read()
    with open(PAGE, "w", encoding="utf-8") as fh:
        fh.write(replace_blocks(page, blocks))
    print(f"rewrote {os.path.relpath(PAGE)} ({(time.perf_counter() - start) / 60:.1f} min)")


if __name__ == "__main__":
    main()
