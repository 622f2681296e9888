"""A container passed by keyword (``f(x, cfg={...})``, ``f(x, scales=(...))``) in place
of a parameter's container default: the code unrolls over the container passed, not
the default's keys or length.

Found by the lead merging the fifteenth session's branches: the structures of a call's
arguments were taken by position only (a keyword-passed dict read as "left at its
default"), so ``for k, v in cfg.items()`` walked the default's keys: a dict with one
more key gave the gradient without it (``3 cos x`` where the function's is ``6 cos x``)
and one with other keys a KeyError from emitted code; a branch of this session made a
tuple default's length known the same way (``for s in scales`` of a longer tuple, or of
an array passed in its place, by keyword or by position, summed two of its items).
Every expected value is the closed form of the function (no s2s)."""

from __future__ import annotations

import numpy as np
import pytest

import s2s


def walked(x, cfg={"a": 1.0, "b": 2.0}, scales=(1.0, 2.0)):  # noqa: B006 - read only
    t = 0.0
    for _, v in cfg.items():
        t = t + v * np.sum(np.sin(x))
    for s in scales:
        t = t + s * np.sum(x ** 2)
    return t


X = np.array([0.3, -0.7, 1.2])
CALLS = [{}, {"cfg": {"a": 1.0, "b": 2.0, "c": 3.0}}, {"scales": (1.0, 2.0, 3.0, 4.0)},
         {"cfg": {"a": 0.5}, "scales": (2.0,)}, {}, {"cfg": {"z": 1.0, "b": 2.0, "c": 3.0}},
         {"scales": np.array([1.0, 2.0, 3.0])}, {"cfg": {}, "scales": ()}, {}]


def _passed(kw: dict) -> tuple[dict, tuple]:
    return kw.get("cfg", {"a": 1.0, "b": 2.0}), tuple(kw.get("scales", (1.0, 2.0)))


def _grad(x: np.ndarray, kw: dict) -> np.ndarray:
    cfg, scales = _passed(kw)
    return sum(cfg.values()) * np.cos(x) + sum(scales) * 2.0 * x


@pytest.mark.parametrize("dtype", [np.float64, pytest.param(np.float32, marks=pytest.mark.slow)])
def test_grad_and_value_follow_the_container_passed(dtype) -> None:
    grad, vg = s2s.grad(walked), s2s.value_and_grad(walked)
    tol = 1e-12 if dtype == np.float64 else 2e-5
    for k, kw in enumerate(CALLS):
        x = (X * (1 + 0.1 * k)).astype(dtype)
        np.testing.assert_allclose(grad(x, **kw), _grad(x, kw), rtol=tol, atol=tol,
                                   err_msg=str(kw))
        value, g = vg(x, **kw)
        np.testing.assert_allclose(value, walked(x, **kw), rtol=tol, err_msg=str(kw))
        np.testing.assert_allclose(g, _grad(x, kw), rtol=tol, atol=tol, err_msg=str(kw))


def test_an_array_in_place_of_a_tuple_default_by_position() -> None:
    grad = s2s.grad(walked)
    for k, scales in enumerate([(1.0, 2.0), np.array([1.0, 2.0, 3.0]), (0.5,),
                                np.array([2.0, -1.0, 0.5, 4.0])]):
        cfg = {"a": 1.0, "b": 2.0}
        x = X * (1 + 0.1 * k)
        np.testing.assert_allclose(grad(x, cfg, scales),
                                   _grad(x, {"cfg": cfg, "scales": scales}), rtol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("make", [
    s2s.hessian, s2s.jacfwd, s2s.jacrev,
    lambda f: s2s.jit(s2s.grad(f)),
    lambda f: s2s.jit(s2s.grad(f), backend="jax"),
], ids=["hessian", "jacfwd", "jacrev", "jit_numpy", "jit_jax"])
def test_every_transform_follows_the_container_passed(make) -> None:
    if make.__name__ == "<lambda>" and "jax" in make.__code__.co_consts:
        pytest.importorskip("jax")
    t = make(walked)
    for k, kw in enumerate(CALLS[:6]):
        x = X * (1 + 0.1 * k)
        got = t(x, **kw)
        if got.ndim == 2:  # the Hessian: diagonal
            cfg, scales = _passed(kw)
            np.testing.assert_allclose(got, np.diag(-sum(cfg.values()) * np.sin(x)
                                                    + 2.0 * sum(scales)), atol=1e-12)
        else:
            np.testing.assert_allclose(got, _grad(x, kw), rtol=1e-12, err_msg=str(kw))
