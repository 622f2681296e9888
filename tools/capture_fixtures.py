"""Record JAX's answers for the conformance corpus (tests/fixtures/conformance/).

    python tools/capture_fixtures.py            # needs JAX; about a few minutes

The corpus:

* every rule-table row (tests/rule_table.py, tests/test_rules.py's ROWS and the
  rule_rows_*.py files; the runtime helpers' rows are left out: they are not NumPy
  functions a user writes) becomes a generated function ``r_<row>`` in ``row_fns.py``
  calling the primitive with the row's arguments (the differentiated ones are the
  function's parameters, the others literals), plus ``s_<row>``, its weighted sum, for
  grad and hessian.  Transforms: value, jvp, vjp, vmap (3 examples of the row's
  drawer), grad, hessian (inputs of at most 24 elements);
* every end-to-end rule function (test_rules.E2E, the user-level function per
  primitive) and every corpus function (tests/corpus.py: control flow, pytrees,
  calls) under value, jvp, vjp, grad, vmap, hessian and the compositions vmap(grad),
  jvp(grad) and jacfwd(jacrev).

JAX runs the same source text with ``numpy`` rebound to ``jax.numpy``
(s2s.tools.conformance.load_module(..., twin=True)).  Where ``jax.vmap`` cannot run a
program (a Python ``if`` on a batched value) the expected value is a Python loop of
JAX over the examples, and the manifest says so (``jax_how``).  A case JAX itself
cannot run is left out and listed under ``skipped``.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import re
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TESTS = ROOT / "tests"
sys.path.insert(0, str(TESTS))
sys.path.insert(0, str(ROOT))

import jax  # noqa: E402
import numpy as np  # noqa: E402

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")

from s2s.tools import conformance as C  # noqa: E402

OUT = TESTS / "fixtures" / "conformance"
BATCH = 3
HESSIAN_MAX = 24  # elements over all differentiated inputs


# ---- literals for generated source --------------------------------------------------


def literal(value) -> str:
    if isinstance(value, np.ndarray):
        # no dtype= (s2s refuses a type used as a value): the literal's Python types
        # give the same dtype (bool, int64, float64: floats are spelled with a point)
        assert value.dtype in (np.bool_, np.int64, np.float64), value.dtype
        return f"np.array({_list_literal(value.tolist())})"
    if isinstance(value, (np.floating, np.integer, np.bool_)):
        return literal(value.item())
    if isinstance(value, float):
        if np.isnan(value):
            return "np.nan"
        if np.isinf(value):
            return "np.inf" if value > 0 else "-np.inf"
        return repr(value)
    if isinstance(value, (tuple, list)):
        inner = ", ".join(literal(v) for v in value)
        if isinstance(value, tuple):
            return f"({inner},)" if len(value) == 1 else f"({inner})"
        return f"[{inner}]"
    return repr(value)


def _list_literal(x) -> str:
    if isinstance(x, list):
        return "[" + ", ".join(_list_literal(v) for v in x) + "]"
    return literal(x)


def ident(row_id: str) -> str:
    return re.sub(r"\W", "_", row_id)


# ---- rows -> generated functions ----------------------------------------------------


def row_function(row, args: tuple):
    """(function text of r_<id>, params, wrt values, call text) or None."""
    prim = row.primitive
    sig = prim.signature.parameters
    wrt = set(row.wrt_names())
    params, values, texts = [], [], []
    for name, value in zip(prim.params, args):
        kind = sig[name].kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            start = prim.params.index(name)
            for k, v in enumerate(args[start:]):
                if name in wrt:
                    params.append(f"{name}{k}")
                    values.append(v)
                    texts.append(f"{name}{k}")
                else:
                    texts.append(literal(v))
            break
        if name in wrt:
            params.append(name)
            values.append(value)
            texts.append(name)
        else:
            texts.append(literal(value))
    kw = {k: literal(v) for k, v in row.params.items()}
    if prim.name.startswith("scipy.special."):
        short = prim.name.rsplit(".", 1)[1]
        parts = texts + [f"{k}={v}" for k, v in kw.items()]
        call = f"sp.{short}({', '.join(parts)})"
    else:
        call = prim.spelling(texts, kw)
    return params, values, call


def weights(ans, r):
    if isinstance(ans, (tuple, list)):
        return [weights(a, r) for a in ans]
    return np.round(r.uniform(-1.5, 1.5, size=np.shape(ans)), 2)


def weighted_sum(var: str, ans, w) -> str:
    if isinstance(ans, (tuple, list)):
        return " + ".join(weighted_sum(f"{var}[{i}]", a, wi)
                          for i, (a, wi) in enumerate(zip(ans, w)))
    return f"np.sum({var} * {literal(w) if np.ndim(w) else literal(float(w))})"


def row_cases(store: C.ArrayStore):
    import test_rules as T
    from rule_table import rng_for

    text = [
        '"""Generated by tools/capture_fixtures.py: one function per rule-table row',
        "(r_<row>: the primitive, its differentiated arguments as parameters) and its",
        'weighted sum (s_<row>, for grad and hessian).  Do not edit."""',
        "",
        "import numpy as np",
        "import scipy.special as sp",
        "",
    ]
    cases, skipped, seen = [], [], set()
    for row in T.ROWS:
        prim = row.primitive
        if prim.family == "runtime":
            continue
        r = rng_for(row.id)
        args = tuple(d(r) for d in row.args)
        try:
            ans = prim.impl(*args, **row.params)
        except Exception as exc:  # noqa: BLE001
            skipped.append([row.id, f"numpy raised {exc}"])
            continue
        if any(np.iscomplexobj(a) for a in C.leaves(ans)):
            skipped.append([row.id, "complex output"])
            continue
        params, values, call = row_function(row, args)
        name = ident(row.id)
        assert name not in seen, name
        seen.add(name)
        w = weights(ans, rng_for(row.id + "-weights"))
        sig = ", ".join(params)
        text += [
            "",
            f"def r_{name}({sig}):",
            f"    return {call}",
            "",
            "",
            f"def s_{name}({sig}):",
            f"    out = {call}",
            f"    return {weighted_sum('out', ans, w)}",
            "",
        ]
        # vmap: three examples of the row's drawers (const drawers repeat)
        examples = [values] + [
            row_function(row, tuple(d(rng_for(f"{row.id}-batch{k}")) for d in row.args))[1]
            for k in (1, 2)
        ]
        # a list parameter (np.concatenate's arrays) is batched leaf by leaf
        batched = tuple(C._stack_trees([_floats(ex[i]) for ex in examples])
                        for i in range(len(values)))
        tr = rng_for(row.id + "-tangents")
        tangents = tuple(_like(v, tr) for v in values)
        size = sum(int(np.size(v)) for v in values)
        argnums = list(range(len(values)))
        base = {"module": "row_fns.py", "row": prim.name, "group": "row",
                "source": row.id}
        args_t = tuple(values)
        for transform in ("value", "jvp", "vjp", "grad", "vmap", "hessian"):
            if transform == "hessian" and size > HESSIAN_MAX:
                continue
            fn = f"s_{name}" if transform in ("grad", "hessian") else f"r_{name}"
            case = dict(base, id=f"row/{row.id}/{transform}", function=fn,
                        transform=transform, argnums=argnums,
                        in_axes=[0] * len(values))
            inputs = {"args": args_t}
            if transform == "jvp":
                inputs["tangents"] = tangents
            if transform == "vmap":
                inputs = {"batched": batched}
            cases.append((case, inputs))
    (OUT / "row_fns.py").write_text("\n".join(text) + "\n")
    return cases, skipped


def _floats(v):
    if isinstance(v, (tuple, list)):
        return type(v)(_floats(x) for x in v)
    return np.asarray(v, dtype=np.float64)


def _like(v, r):
    """A random tangent or cotangent of v's structure (float0 for integers)."""
    if isinstance(v, (tuple, list)):
        return type(v)(_like(x, r) for x in v)
    if isinstance(v, dict):
        return {k: _like(x, r) for k, x in v.items()}
    dtype = np.result_type(v)
    if not np.issubdtype(dtype, np.inexact):
        return np.zeros(np.shape(v), C.FLOAT0)
    if isinstance(v, float):
        return float(r.normal())
    return np.asarray(r.normal(size=np.shape(v)), dtype=dtype)


def _perturb(v, r, k):
    """Example k of a batch: floats moved by about 1% (domains stay valid)."""
    if isinstance(v, (tuple, list)):
        return type(v)(_perturb(x, r, k) for x in v)
    if isinstance(v, dict):
        return {key: _perturb(x, r, k) for key, x in v.items()}
    a = np.asarray(v)
    if not np.issubdtype(a.dtype, np.floating):
        return v
    if k == 0:
        return a
    return a * (1.0 + 0.01 * r.normal(size=a.shape)).astype(a.dtype)


def _floaty(v) -> bool:
    return v is not None and all(np.issubdtype(np.result_type(x), np.floating) for x in C.leaves(v))


# ---- program-level cases: functions from the test modules ---------------------------


CONTROL = ("loop", "while", "if_", "early", "recurs", "conditional", "comparison",
           "return_in", "break", "continue", "fill_in", "recurrence")
TREES = ("dict", "nested", "tuple", "two_layers", "aux", "list", "unpacking")


def program_family(name: str) -> str:
    if any(k in name for k in CONTROL):
        return "program:control_flow"
    if any(k in name for k in TREES):
        return "program:pytrees"
    return "program:numpy"


def program_cases(fn, module_rel: str, fname: str, cid: str, row: str, args: tuple,
                  argnums, has_aux: bool, seed: str):
    from rule_table import rng_for

    r = rng_for(seed)
    base = {"module": module_rel, "function": fname, "row": row, "group": "program",
            "source": cid, "argnums": argnums, "has_aux": has_aux}
    in_axes = [0 if _floaty(a) and not isinstance(a, (int, bool)) else None for a in args]
    batched = tuple(
        a if ax is None else C._stack_trees([_perturb(a, r, k) for k in range(BATCH)])
        for a, ax in zip(args, in_axes))
    tangents = tuple(_like(a, r) for a in args)
    nums = argnums if isinstance(argnums, list) else [argnums]
    size = sum(int(np.size(x)) for i in nums for x in C.leaves(args[i]))
    out = []
    transforms = ["value", "grad"] + ([] if has_aux else
                                      ["jvp", "vjp", "vmap", "hessian", "vmap_grad",
                                       "jvp_grad", "jacfwd_jacrev"])
    for transform in transforms:
        if transform in ("hessian", "jacfwd_jacrev") and size > HESSIAN_MAX:
            continue
        if transform in ("vmap", "vmap_grad") and all(ax is None for ax in in_axes):
            continue
        case = dict(base, id=f"{cid}/{transform}", transform=transform, in_axes=in_axes)
        inputs = {"args": args}
        if transform in ("jvp", "jvp_grad"):
            inputs["tangents"] = tangents
        if transform in ("vmap", "vmap_grad"):
            inputs = {"batched": batched}
        out.append((case, inputs))
    return out


def e2e_cases():
    import test_rules as T

    cases = []
    for c in T.E2E:
        if not c.jax:
            continue
        module = sys.modules[c.fn.__module__]
        rel = os.path.relpath(module.__file__, OUT)
        argnums = list(c.argnums) if len(c.argnums) > 1 else c.argnums[0]
        cases += program_cases(c.fn, rel, c.fn.__name__, f"e2e/{c.id}", c.prims[0],
                               c.draw(), argnums, False, "e2e-" + c.id)
    return cases


def corpus_cases():
    import corpus_fns
    from corpus import CASES
    from oracle import attr_name

    cases = []
    rel = os.path.relpath(corpus_fns.__file__, OUT)
    for c in CASES:
        if not c.jax or c.kwargs:
            continue
        argnums = list(c.argnums) if isinstance(c.argnums, tuple) else c.argnums
        cases += program_cases(c.fn, rel, attr_name(c), f"corpus/{c.name}",
                               program_family(c.name), c.args(), argnums, c.has_aux,
                               "corpus-" + c.name)
    return cases


# ---- recording ----------------------------------------------------------------------


def answer(item):
    """JAX's answer for one case (the cotangent drawn first for vjp), or why not."""
    import warnings

    case, inputs = item
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if case["transform"] == "vjp":
                fn = getattr(C.load_module(OUT / case["module"], twin=True),
                             case["function"])
                out = C._to_numpy(fn(*inputs["args"]))
                inputs["cotangent"] = _like(out, np.random.default_rng(len(case["id"])))
            expected, how = C.jax_expected(case, inputs, OUT)
        except Exception as exc:  # noqa: BLE001
            if case["transform"] not in ("vmap", "vmap_grad"):
                return case, inputs, None, f"{type(exc).__name__}: {C._first_line(exc)}"
            case["jax_how"] = ("loop over examples of "
                               + ("twin" if case["transform"] == "vmap" else "jax.grad")
                               + f" (jax.vmap raised {type(exc).__name__})")
            try:
                expected, how = C.jax_expected(case, inputs, OUT)
            except Exception as exc2:  # noqa: BLE001
                return case, inputs, None, f"{type(exc2).__name__}: {C._first_line(exc2)}"
    if any(np.iscomplexobj(x) for x in C.leaves(expected)):
        return case, inputs, None, "complex output"
    case["jax_how"] = how
    return case, inputs, expected, None


def _worker_init():
    jax.config.update("jax_enable_x64", True)


def manifest_text(manifest: dict) -> str:
    """Compact JSON, one case per line (readable in a diff)."""
    head = {k: v for k, v in manifest.items() if k != "cases"}
    lines = json.dumps(head, indent=1)[:-2] + ',\n "cases": [\n'
    body = ",\n".join(json.dumps(c, separators=(",", ":")) for c in manifest["cases"])
    return lines + body + "\n]}\n"


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    store = C.ArrayStore()
    start = time.time()
    rows, skipped = row_cases(store)
    todo = rows + e2e_cases() + corpus_cases()
    limit = int(os.environ.get("CAPTURE_EVERY", "1"))  # for timing: every n-th case
    todo = todo[::limit]
    cases = []
    only = os.environ.get("CAPTURE_ONLY")  # re-record the cases whose id matches (regex)
    if only:
        old = json.loads((OUT / "manifest.json").read_text())
        with np.load(OUT / "arrays.npz", allow_pickle=True) as data:  # our own file
            for key in data.files:
                store.arrays[key] = data[key]
        cases = [c for c in old["cases"] if not re.search(only, c["id"])]
        skipped = [s for s in old["skipped"] if not re.search(only, s[0])]
        todo = [(c, i) for c, i in todo if re.search(only, c["id"])]
    jobs = int(os.environ.get("CAPTURE_JOBS", "2"))
    import multiprocessing as mp

    with mp.get_context("spawn").Pool(jobs, initializer=_worker_init) as pool:
        for i, (case, inputs, expected, why) in enumerate(
                pool.imap(answer, todo, chunksize=8)):
            if why is None:
                case["inputs"] = {k: C.encode(v, store) for k, v in inputs.items()}
                case["expected"] = C.encode(expected, store)
                cases.append(case)
            else:
                skipped.append([case["id"], why])
            if i % 250 == 0:
                print(f"{i}/{len(todo)} {time.time() - start:.0f}s", flush=True)
    if only:  # keep the corpus's order; drop arrays nothing refers to any more
        order = {c["id"]: k for k, (c, _) in enumerate(rows + e2e_cases() + corpus_cases())}
        cases.sort(key=lambda c: order.get(c["id"], len(order)))
        used = set(re.findall(r'"a": "(\w+)"', json.dumps(cases)))
        store.arrays = {k: v for k, v in store.arrays.items() if k in used}
    np.savez_compressed(OUT / "arrays.npz", **store.arrays)
    digest = hashlib.sha1()
    for path in (OUT / "arrays.npz", OUT / "row_fns.py"):
        digest.update(path.read_bytes())
    digest.update(json.dumps(cases, sort_keys=True).encode())
    manifest = {
        "jax_version": jax.__version__,
        "jaxlib_version": getattr(__import__("jaxlib"), "__version__", "?"),
        "numpy_version": np.__version__,
        "x64": True,
        "produced_by": "python tools/capture_fixtures.py",
        "how": ("each case runs the function's JAX twin (the module's text with numpy "
                "rebound to jax.numpy, scipy.special to jax.scipy.special) under the "
                "transform named by jax_how; inputs are drawn by the rule table's "
                "drawers (rows, E2E functions) or tests/corpus.py (programs)"),
        "digest": digest.hexdigest()[:16],
        "count": len(cases),
        "skipped": skipped,
        "cases": cases,
    }
    (OUT / "manifest.json").write_text(manifest_text(manifest))
    print(f"recorded {len(cases)} cases ({len(skipped)} skipped) into {OUT} "
          f"in {time.time() - start:.0f}s")


if __name__ == "__main__":
    main()
