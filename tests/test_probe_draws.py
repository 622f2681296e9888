"""vmap's first call runs a probe on one example to learn ranks; a module-level
``np.random.Generator`` or ``RandomState`` the code draws from was advanced by it, so
the first batched call's draws were out of step with NumPy's (the second and later
matched).  The probe now draws from copies.  Oracle: a generator of the same seed
drawing in step (a batch's draws are one draw of the batch's shape)."""

from __future__ import annotations

import numpy as np
import probe_draw_fns as F
import pytest

import s2s

X = np.array([0.3, -0.7, 0.45, 1.2])


@pytest.mark.parametrize("name, module_rng, draw, grad_of", [
    ("generator_draw", "RNG", lambda r, shape: r.normal(size=shape), lambda x, d: d),
    ("random_state_draw", "STATE", lambda r, shape: r.uniform(size=shape),
     lambda x, d: np.cos(x) * d),
    ("draw_value", "RNG", lambda r, shape: r.normal(size=shape), lambda x, d: x * d),
])
def test_the_first_batched_call_draws_what_numpy_draws(name, module_rng, draw, grad_of):
    f = getattr(F, name)
    batched = s2s.vmap(f) if name == "draw_value" else s2s.vmap(s2s.grad(f))
    batch = np.stack([X, 2 * X])
    for call in range(3):
        seed = 11 + call
        fresh = getattr(F, module_rng)  # (the module's own object, seeded in place)
        if module_rng == "RNG":
            fresh.bit_generator.state = np.random.default_rng(seed).bit_generator.state
            twin = np.random.default_rng(seed)
        else:
            fresh.seed(seed)
            twin = np.random.RandomState(seed)
        got = batched(batch)
        np.testing.assert_allclose(got, grad_of(batch, draw(twin, batch.shape)), rtol=1e-12)
        # (the module's generator was advanced by exactly the batch's draw)
        np.testing.assert_allclose(draw(fresh, (3,)), draw(twin, (3,)), rtol=0)
