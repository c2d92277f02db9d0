"""A JAX function as a metagame policy: a few lines over the callable contract
``policy(obs, legal) -> probs``.

``policy(apply, params)`` wraps ``apply(params, obs) -> logits`` (Flax's ``module.apply``,
Haiku's ``transformed.apply``, or any function of a parameter pytree; ``params=None`` for
``apply(obs)``): the logits of illegal actions are masked and a softmax taken, compiled once
per batch shape with ``jax.jit``, on JAX's default device.

The policy pickles as ``apply`` (by reference: a module-level function) and its parameters
as numpy arrays, so that a run keeps it as a member and resumes with it.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as _np


class Policy:
    """``apply`` with its parameters as a callable policy (see the module's docstring)."""

    def __init__(self, apply: Callable[..., Any], params: Any = None, name: Optional[str] = None) -> None:
        self.apply = apply
        self.params = params
        self.__name__ = name or getattr(apply, "__name__", "jax_policy")
        self._compiled: Optional[Callable] = None

    def __call__(self, obs: _np.ndarray, legal: _np.ndarray) -> _np.ndarray:
        if self._compiled is None:
            import jax
            import jax.numpy as jnp

            apply = self.apply

            def probabilities(params, obs, legal):
                logits = apply(obs) if params is None else apply(params, obs)
                return jax.nn.softmax(jnp.where(legal, logits, -jnp.inf), axis=-1)

            self._compiled = jax.jit(probabilities)
        return _np.asarray(self._compiled(self.params, obs, legal), dtype=_np.float32)

    def __getstate__(self) -> dict:
        import jax

        state = dict(self.__dict__)
        state["_compiled"] = None
        state["params"] = jax.tree_util.tree_map(_np.asarray, self.params)
        return state


def policy(apply: Callable[..., Any], params: Any = None, name: Optional[str] = None) -> Policy:
    """``apply`` as a policy ``(obs [B x d] float32, legal [B x A] bool) -> probs``."""
    return Policy(apply, params, name)
