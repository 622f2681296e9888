"""``s2s conformance``: replay the recorded JAX corpus through s2s (see s2s/tools/conformance.py).

    python -m s2s conformance              # the matrix: row x transform
    python -m s2s conformance --json       # every case's result, machine-readable
    python -m s2s conformance --count      # the number of cases
    python -m s2s conformance --markdown   # docs/conformance.md
    python -m s2s conformance --live       # also run JAX again (needs JAX)

The fixtures are read from tests/fixtures/conformance/ next to the package (a
checkout), or from ``--fixtures`` / ``S2S_CONFORMANCE_FIXTURES``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import conformance as C


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "conformance", help="replay the recorded JAX conformance corpus through s2s")
    form = p.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="results as JSON")
    form.add_argument("--count", action="store_true", help="print the number of cases")
    form.add_argument("--markdown", action="store_true", help="docs/conformance.md")
    p.add_argument("--live", action="store_true",
                   help="run JAX again too; recorded-vs-live differences are reported "
                        "apart from s2s's results")
    p.add_argument("--fixtures", type=Path, default=None,
                   help="the fixture folder (default: tests/fixtures/conformance)")
    p.add_argument("-k", "--filter", default=None,
                   help="only cases whose id contains this text")
    p.add_argument("-j", "--jobs", type=int, default=1, help="worker processes")
    p.set_defaults(handler=_main)


def _chunk(args: tuple) -> list:
    fixtures, ids, live = args
    corpus = C.load(fixtures)
    wanted = set(ids)
    return C.run(corpus, [c for c in corpus.cases if c["id"] in wanted], live=live)


def run_all(corpus, cases: list, live: bool, jobs: int) -> list:
    if jobs <= 1 or len(cases) < 2 * jobs:
        return C.run(corpus, cases, live=live)
    from concurrent.futures import ProcessPoolExecutor

    ids = [c["id"] for c in cases]
    parts = [ids[i::jobs] for i in range(jobs)]
    with ProcessPoolExecutor(jobs) as pool:
        done = list(pool.map(_chunk, [(corpus.root, p, live) for p in parts]))
    by_id = {r.id: r for part in done for r in part}
    return [by_id[i] for i in ids]


def _main(args: argparse.Namespace) -> int:
    try:
        corpus = C.load(args.fixtures)
    except FileNotFoundError as exc:
        print(exc, file=sys.stderr)
        return 2
    cases = [c for c in corpus.cases if not args.filter or args.filter in c["id"]]
    if args.count:
        print(len(cases))
        return 0
    if args.live:
        try:
            import jax  # noqa: F401
        except ImportError:
            print("--live needs JAX (pip install s2s[jax])", file=sys.stderr)
            return 2
    results = run_all(corpus, cases, args.live, args.jobs)
    failed = any(r.status == "fail" for r in results)
    if args.markdown:
        sys.stdout.write(C.markdown(corpus, results))
        return 0
    if args.json:
        json.dump(C.as_json(corpus, results), sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 1 if failed else 0
    _print_matrix(corpus, results)
    return 1 if failed else 0


def _print_matrix(corpus, results: list) -> None:
    m = C.matrix(results)
    used = [t for t in C.TRANSFORMS if any(t in row for row in m.values())]
    width = max([len(r) for r in m] + [8])
    print(f"fixtures: {corpus.root} (JAX {corpus.manifest['jax_version']})")
    print(" " * width + "  " + "".join(f"{t:<24}" for t in used))
    for row in sorted(m, key=lambda r: (r.startswith("program:"), r)):
        cells = "".join(f"{C._cell(m[row].get(t)):<24}" for t in used)
        print(f"{row:<{width}}  {cells}")
    total = {s: sum(r.status == s for r in results) for s in ("pass", "fail", "unsupported")}
    print(f"{len(results)} cases: {total['pass']} pass, {total['fail']} fail, "
          f"{total['unsupported']} unsupported")
    for r in results:
        if r.status == "fail":
            print(f"FAIL {r.id}: {r.detail}")
    drift = [r for r in results if r.jax_drift]
    if drift:
        print(f"{len(drift)} cases where live JAX differs from the recording "
              "(not s2s failures):")
        for r in drift:
            print(f"JAX DRIFT {r.id}: {r.jax_drift}")
