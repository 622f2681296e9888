"""Expected gradients for corpus cases: live JAX, or the recorded fixture."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

import corpus_fns
from corpus import Case
from support import HAVE_JAX, jax, jax_twin, leaves

FIXTURES = Path(__file__).parent / "fixtures" / "corpus_grads.npz"
MANIFEST = Path(__file__).parent / "fixtures" / "corpus_grads.json"
_TWIN = None


def attr_name(case: Case) -> str:
    return next(k for k, v in vars(corpus_fns).items() if v is case.fn)


def live_jax_grad(case: Case) -> list[np.ndarray]:
    global _TWIN
    if _TWIN is None:
        _TWIN = jax_twin(corpus_fns)
    fn = getattr(_TWIN, attr_name(case))
    args = case.args()
    g = jax.grad(fn, argnums=case.argnums, has_aux=case.has_aux)(*args, **case.kwargs)
    if case.has_aux:
        g = g[0]
    return [np.asarray(x) for x in leaves(g)]


def recorded_grad(case: Case) -> list[np.ndarray] | None:
    if not FIXTURES.exists():
        return None
    with np.load(FIXTURES) as data:
        keys = sorted(
            (k for k in data.files if k.startswith(case.name + "/")),
            key=lambda k: int(k.rsplit("/", 1)[1]),
        )
        return [data[k] for k in keys] if keys else None


def expected_grad(case: Case) -> tuple[list[np.ndarray] | None, str]:
    if HAVE_JAX and case.jax:
        return live_jax_grad(case), "live jax"
    return recorded_grad(case), "recorded jax"


def record(cases: list[Case]) -> None:
    arrays: dict[str, Any] = {}
    for case in cases:
        if not case.jax:
            continue
        for i, leaf in enumerate(live_jax_grad(case)):
            arrays[f"{case.name}/{i}"] = leaf
    FIXTURES.parent.mkdir(exist_ok=True)
    np.savez_compressed(FIXTURES, **arrays)
    MANIFEST.write_text(json.dumps({
        "jax_version": jax.__version__,
        "numpy_version": np.__version__,
        "produced_by": "python tools/record_fixtures.py",
        "x64": True,
        "cases": sorted({k.split("/")[0] for k in arrays}),
    }, indent=2) + "\n")
