"""Every example runs (small sizes) and does what it says, checked against oracles
that do not use s2s: finite differences, closed forms, a converged optimum."""

from __future__ import annotations

import contextlib
import importlib.util
import io
from pathlib import Path

import numpy as np
import pytest

from s2s.tools.teach.check import fd_grad

EXAMPLES = Path(__file__).parent.parent / "examples"


def run(name: str):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        result = module.main(quick=True) if name != "quickstart" else module.main()
    return module, result, out.getvalue()


def test_every_example_is_tested() -> None:
    tested = {"quickstart", "logistic_regression", "mlp", "per_example_gradients",
              "newton_hessian", "ode_sensitivity", "forward_vs_reverse", "odeint_adjoint"}
    assert {p.stem for p in EXAMPLES.glob("*.py")} == tested


def test_quickstart() -> None:
    module, _, out = run("quickstart")
    assert "def loss_grad(w, x, y):" in out
    rng = np.random.default_rng(0)
    x, w, y = rng.normal(size=(8, 3)), rng.normal(size=3), rng.normal(size=8)
    np.testing.assert_allclose(module.loss(w, x, y), fd_grad(module.loss.fn, [w, x, y], 0),
                               rtol=1e-6, atol=1e-9)


def test_logistic_regression() -> None:
    _, r, _ = run("logistic_regression")
    assert r["final"] < 0.6 * r["first"]
    assert r["accuracy"] > 0.8
    assert r["standalone_error"] < 1e-12  # the emitted module agrees with s2s.grad


def test_mlp() -> None:
    module, r, _ = run("mlp")
    assert r["final"] < 0.3 * r["first"]
    rng = np.random.default_rng(1)
    params = module.init(rng, 3)
    x = np.linspace(-1, 1, 5)[:, None]
    y = np.sin(3 * x)
    g = module.loss_grad(params, x, y)
    for k in params:  # each gradient leaf against finite differences

        def f(leaf, k=k):
            return module.loss({**params, k: leaf}, x, y)

        np.testing.assert_allclose(g[k], fd_grad(f, [params[k]], 0), rtol=1e-5, atol=1e-8)


def test_per_example_gradients() -> None:
    module, r, _ = run("per_example_gradients")
    for i in (0, 7, 15):
        fd = fd_grad(module.loss, [r["w"], r["x"][i], r["y"][i]], 0)
        np.testing.assert_allclose(r["grads"][i], fd, rtol=1e-6, atol=1e-9)
    assert np.all(np.linalg.norm(r["clipped"], axis=1) <= 1 + 1e-12)


def test_newton_hessian() -> None:
    module, r, _ = run("newton_hessian")
    norms = r["norms"]
    assert norms[-1] < 1e-10 and len(norms) <= 8
    # quadratic convergence at the end: the exponent at least ~doubles
    assert np.log(norms[-2]) < 1.6 * np.log(norms[-3]) or norms[-2] < 1e-10
    fd = fd_grad(module.objective, [r["x"], r["a"]], 0)
    assert np.max(np.abs(fd)) < 1e-7  # a minimum by a measure without s2s


def test_ode_sensitivity() -> None:
    _, r, _ = run("ode_sensitivity")
    np.testing.assert_allclose(r["grad"], r["fd"], rtol=1e-6, atol=1e-9)
    # dy(T)/dy0 is exp(-kT) for the exact solution; RK4 is close
    assert r["grad"][2] == pytest.approx(np.exp(-r["theta"][0] * r["T"]), rel=1e-4)


def test_forward_vs_reverse() -> None:
    _, r, out = run("forward_vs_reverse")
    np.testing.assert_allclose(r["forward"], r["by_hand"], rtol=1e-12)
    np.testing.assert_allclose(r["reverse"], r["by_hand"], rtol=1e-12)
    assert "y_dot" in out and "y_bar" in out


def test_odeint_adjoint() -> None:
    pytest.importorskip("scipy.integrate")
    _, r, out = run("odeint_adjoint")
    assert "def lotka_volterra_adjoint(y, y_bar, t, alpha, beta):" in out
    np.testing.assert_allclose(r["grad"], r["fd"], rtol=1e-5)
