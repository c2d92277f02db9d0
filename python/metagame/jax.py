"""A JAX function as a metagame policy: a few lines over the callable contract
``policy(obs, legal) -> probs``.

``policy(apply, params)`` wraps ``apply(params, obs) -> logits`` (Flax's ``module.apply``,
Haiku's ``transformed.apply``, or any function of a parameter pytree; ``params=None`` for
``apply(obs)``): the logits of illegal actions are masked and a softmax taken, compiled once
per batch shape with ``jax.jit``, on JAX's default device.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as _np


def policy(apply: Callable[..., Any], params: Any = None, name: Optional[str] = None) -> Callable:
    """``apply`` as a policy ``(obs [B x d] float32, legal [B x A] bool) -> probs``."""
    import jax
    import jax.numpy as jnp

    def probabilities(params, obs, legal):
        logits = apply(obs) if params is None else apply(params, obs)
        return jax.nn.softmax(jnp.where(legal, logits, -jnp.inf), axis=-1)

    compiled = jax.jit(probabilities)

    def call(obs: _np.ndarray, legal: _np.ndarray) -> _np.ndarray:
        return _np.asarray(compiled(params, obs, legal), dtype=_np.float32)

    call.__name__ = name or getattr(apply, "__name__", "jax_policy")
    return call
