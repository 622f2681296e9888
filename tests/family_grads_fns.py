"""The functions of tests/test_family_grads.py: a transform of a lambda made again at
each call (a training step), written once against a ``grad`` passed in, so the JAX
twin (tests/support.py ``jax_twin``: this source with ``jax.numpy``) runs the same
text under ``jax.grad``."""

import numpy as np

SCALE = 1.0  # (rebound between calls by the tests)
ACT = np.tanh


def logistic(w, x, y):
    return np.mean(np.log1p(np.exp(-y * (x @ w))))


def logistic_sum(w, x, y):
    return np.sum(np.log1p(np.exp(-y * (x @ w))))


def closure_step(grad, w, x, y):
    return grad(lambda w: logistic(w, x, y))(w)


def closure_sum_step(grad, w, x, y):
    return grad(lambda w: logistic_sum(w, x, y))(w)


def number_step(grad, w, c, mode):
    return grad(lambda w: (np.sum(w**2) if mode == "l2" else np.sum(np.sin(w))) * c)(w)


def default_step(grad, w, x, c):
    return grad(lambda w, c=c: np.sum(np.sin(w * c) * x))(w)


def global_step(grad, w, x):
    return grad(lambda w: SCALE * np.sum(ACT(w * x)))(w)


def two_on_a_line(grad, w, x):
    f, g = (lambda w: np.sum(np.sin(w) * x)), (lambda w: np.sum(np.cos(w) * x))
    return grad(f)(w), grad(g)(w)


def value_step(value_and_grad, w, x, y):
    return value_and_grad(lambda w: logistic(w, x, y))(w)


def aux_step(grad, w, x):
    return grad(lambda w: (np.sum(np.sin(w) * x), np.sum(x)), has_aux=True)(w)


def two_args_step(grad, w, b, x):
    return grad(lambda w, b: np.sum(np.tanh(x @ w + b)), argnums=(0, 1))(w, b)


def keyword_step(grad, w, b, x):
    return grad(lambda w, b: np.sum(np.tanh(x @ w + b)))(w, b=b)


def make(grad, x, y):
    """The transform of a new lambda, uncalled."""
    return grad(lambda w: logistic(w, x, y))


def mlp_loss(params, x, y):
    w1, b1, w2, b2 = params
    h = np.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    m = np.max(logits, axis=1, keepdims=True)
    logp = logits - m - np.log(np.sum(np.exp(logits - m), axis=1, keepdims=True))
    return -np.mean(np.sum(y * logp, axis=1))


def mlp_step(grad, params, x, y):
    return grad(lambda p: mlp_loss(p, x, y))(params)


def vjp_step(vjp, w, x, y):
    out, pull = vjp(lambda w: np.tanh(x @ w) * y, w)
    return out, pull((y * 2.0).astype(out.dtype))


def pullback(vjp, w, x):
    return vjp(lambda w: np.sin(x @ w), w)[1]  # (its own cell for x: never rebound)


def vjp_pullbacks(vjp, w, xs):
    """One vjp per batch, every pullback called after all of them were made."""
    pulls = [pullback(vjp, w, x) for x in xs]
    return [p(np.ones(x.shape[0], w.dtype))[0] for p, x in zip(pulls[::-1], xs[::-1])]
