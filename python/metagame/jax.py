"""A JAX function as a metagame policy: a few lines over the callable contract
``policy(obs, legal) -> probs``.

``policy(apply, params)`` wraps ``apply(params, obs) -> logits`` (Flax's ``module.apply``,
Haiku's ``transformed.apply``, or any function of a parameter pytree; ``params=None`` for
``apply(obs)``): the logits of illegal actions are masked and a softmax taken, compiled once
per batch shape with ``jax.jit``, on JAX's default device.

A run keeps the policy as a member in its folder without pickle where ``apply`` is a
module-level function (importable by its name): its parameters in safetensors, one tensor
per leaf named by its path (``layer0/w``), with ``apply``'s import path and the pytree's
shape (dicts, lists and tuples of arrays) in the file's metadata. Otherwise (a bound
``module.apply``, a lambda) the run keeps it pickled, where the run allows pickle: the
policy pickles as ``apply`` (by reference) and its parameters as numpy arrays.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as _np

from . import _member_files


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

    def _metagame_file(self) -> Optional[tuple[str, str, bytes]]:
        """The member file a run keeps without pickle (see the module's docstring), or None."""
        return _state_file(self)

    def __getstate__(self) -> dict:
        import jax

        state = dict(self.__dict__)
        state["_compiled"] = None
        state["params"] = jax.tree_util.tree_map(_np.asarray, self.params)
        return state


def _skeleton(tree: Any, path: str, leaves: dict) -> Any:
    """``tree``'s shape as JSON, its arrays put in ``leaves`` by path; None for a pytree
    of other containers."""
    if isinstance(tree, dict) and all(isinstance(k, str) and "/" not in k for k in tree):
        parts = {k: _skeleton(v, f"{path}/{k}" if path else k, leaves) for k, v in tree.items()}
        return None if any(p is None for p in parts.values()) else {"dict": parts}
    if isinstance(tree, (list, tuple)):
        parts = [_skeleton(v, f"{path}/{i}" if path else str(i), leaves) for i, v in enumerate(tree)]
        return None if any(p is None for p in parts) else {"list" if isinstance(tree, list) else "tuple": parts}
    if tree is None:
        return {"none": True}
    if hasattr(tree, "shape") and hasattr(tree, "dtype"):
        leaves[path or "params"] = _np.ascontiguousarray(_np.asarray(tree))
        return {"array": path or "params"}
    return None


def _rebuild(skeleton: dict, leaves: dict) -> Any:
    """The pytree ``_skeleton`` described, from its arrays."""
    if "dict" in skeleton:
        return {k: _rebuild(v, leaves) for k, v in skeleton["dict"].items()}
    if "list" in skeleton:
        return [_rebuild(v, leaves) for v in skeleton["list"]]
    if "tuple" in skeleton:
        return tuple(_rebuild(v, leaves) for v in skeleton["tuple"])
    if "none" in skeleton:
        return None
    return leaves[skeleton["array"]]


def _state_file(policy: Policy) -> Optional[tuple[str, str, bytes]]:
    """``("jax", "safetensors", bytes)`` for a policy whose ``apply`` is importable by its
    name and whose parameters are dicts, lists and tuples of arrays; else None."""
    from safetensors.numpy import save

    apply = _member_files.import_path(policy.apply)
    leaves: dict = {}
    skeleton = _skeleton(policy.params, "", leaves)
    if apply is None or skeleton is None:
        return None
    recipe = {"apply": apply, "name": policy.__name__, "params": skeleton}
    return "jax", "safetensors", save(leaves, metadata=_member_files.metadata(recipe))


def _from_file(data: bytes) -> Policy:
    """A policy back from the bytes ``Policy._metagame_file`` wrote."""
    from safetensors.numpy import load

    recipe = _member_files.recipe(data)
    return Policy(_member_files.resolve(recipe["apply"]), _rebuild(recipe["params"], load(data)), recipe["name"])


def policy(apply: Callable[..., Any], params: Any = None, name: Optional[str] = None) -> Policy:
    """``apply`` as a policy ``(obs [B x d] float32, legal [B x A] bool) -> probs``."""
    return Policy(apply, params, name)
