"""The second call's cost against function length: the time ``s2s.grad`` spends
specializing its code to a signature (s2s/optimize/specialize.py), for generated straight-line
functions of n statements.

    python tools/bench_specialize.py            # n = 10, 50, 100, 200, 400, 800

Prints the emitted gradient's statement count, the first call (generation) and the
second call (specialization) in CPU seconds, and whether the e-graph passes ran.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import s2s
from s2s.optimize import specialize as S

FORMS = ["np.sin(a) * y", "a * 0.5 + y", "np.tanh(a + y)", "a * a * 0.1 + y"]


def long_function(n: int, where: Path):
    lines = ["import numpy as np", "", "", "def f(x, y):", "    a = x"]
    lines += [f"    a = {FORMS[i % len(FORMS)]}" for i in range(n)]
    lines.append("    return np.sum(a)")
    path = where / f"long_{n}.py"
    path.write_text("\n".join(lines) + "\n")
    spec = importlib.util.spec_from_file_location(f"long_{n}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.f


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [10, 50, 100, 200, 400, 800]
    where = Path(tempfile.mkdtemp(prefix="s2s_bench_specialize_"))
    x, y = np.ones(3), np.ones(3)
    print(f"{'n':>5} {'statements':>10} {'first (s)':>10} {'second (s)':>11}  passes")
    for n in sizes:
        g = s2s.grad(long_function(n, where))
        t0 = time.process_time()
        g(x, y)
        t1 = time.process_time()
        g(x, y)
        t2 = time.process_time()
        size = sum(isinstance(s, ast.stmt) for s in ast.walk(ast.parse(g.source)))
        passes = ("generic code" if size > S.MAX_STATEMENTS else "all" if
                  size <= S.MAX_EGRAPH_STATEMENTS else "no e-graph")
        print(f"{n:>5} {size:>10} {t1 - t0:>10.2f} {t2 - t1:>11.2f}  {passes}")


if __name__ == "__main__":
    main()
