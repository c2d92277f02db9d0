"""A PyTorch module as a metagame policy, and an ``nn.Sequential`` of ``Linear`` and
``ReLU`` layers as the native network member: a few lines over the callable contract
``policy(obs, legal) -> probs``.

``policy(module)`` runs the module on its own device under ``torch.no_grad()``, the numpy
batch taken without a copy on the CPU (``torch.from_numpy``), the logits of illegal actions
masked and a softmax taken. ``to_native(module, path)`` writes the module's ``state_dict``
as safetensors, the layout metagame's own network member reads (``FILE.safetensors`` is a
policy everywhere a policy is named), which then plays at Rust speed without Python.

A run keeps such a policy as a member in its folder as the module's ``state_dict`` in
safetensors (PyTorch's names and layout: ``safetensors.torch.load_file`` reads it), with
how to rebuild the module in the file's metadata: an ``nn.Sequential`` of ``torch.nn``
layers is rebuilt layer by layer; any other module by ``build(**build_kwargs)``, a
module-level function or class given to ``policy``. Nothing is pickled.
"""

from __future__ import annotations

import json
import os
from typing import Any, Callable, Optional, Union

import numpy as _np

from . import _member_files

# torch.nn layers rebuilt from their constructor arguments, read back from the layer.
_LAYERS: dict[str, Callable[[Any], dict]] = {
    "Linear": lambda m: {"in_features": m.in_features, "out_features": m.out_features, "bias": m.bias is not None},
    "LayerNorm": lambda m: {"normalized_shape": list(m.normalized_shape), "eps": m.eps,
                            "elementwise_affine": m.elementwise_affine},
    "ReLU": lambda m: {},
    "Tanh": lambda m: {},
    "Sigmoid": lambda m: {},
    "Identity": lambda m: {},
    "GELU": lambda m: {"approximate": m.approximate},
    "ELU": lambda m: {"alpha": m.alpha},
    "LeakyReLU": lambda m: {"negative_slope": m.negative_slope},
    "Dropout": lambda m: {"p": m.p},
    "Flatten": lambda m: {"start_dim": m.start_dim, "end_dim": m.end_dim},
}


def _recipe(module: Any, build: Any, build_kwargs: dict) -> Optional[dict]:
    """How to rebuild ``module``: its ``build``, or its layers; None if neither is known."""
    import torch

    if build is not None:
        return {"build": _member_files.import_path(build), "kwargs": build_kwargs}
    if type(module) is torch.nn.Sequential:
        layers = []
        for layer in module:
            name = type(layer).__name__
            if name not in _LAYERS or type(layer) is not getattr(torch.nn, name):
                return None
            layers.append([name, _LAYERS[name](layer)])
        return {"sequential": layers}
    return None


class Policy:
    """A module as a callable policy (see the module's docstring). ``build`` (with
    ``build_kwargs``) makes a fresh module of the same shape, for a run to rebuild it from
    its state dict; an ``nn.Sequential`` of ``torch.nn`` layers needs none."""

    def __init__(
        self, module: Any, device: Optional[Any] = None, build: Any = None, build_kwargs: Optional[dict] = None
    ) -> None:
        import torch

        if build is not None and _member_files.import_path(build) is None:
            raise ValueError(
                f"build: a module-level function or class (importable by its name), got {build!r}"
            )
        kwargs = dict(build_kwargs or {})
        try:
            json.dumps(kwargs)
        except TypeError as e:
            raise ValueError(f"build_kwargs: numbers, strings, lists and dicts only ({e})") from None
        self.module = module
        self.device = next(module.parameters(), torch.empty(0)).device if device is None else torch.device(device)
        self.build = build
        self.build_kwargs = kwargs
        self.__name__ = type(module).__name__

    def __call__(self, obs: _np.ndarray, legal: _np.ndarray) -> _np.ndarray:
        import torch

        with torch.no_grad():
            x = torch.from_numpy(obs).to(self.device)
            mask = torch.from_numpy(legal).to(self.device)
            logits = self.module(x).masked_fill(~mask, float("-inf"))
            return torch.softmax(logits, dim=-1).cpu().numpy()

    def _metagame_file(self) -> Optional[tuple[str, str, bytes]]:
        """The member file a run keeps: ``("torch", "safetensors", bytes)``, the state dict
        with the recipe in its metadata; None when the module cannot be rebuilt."""
        from safetensors.torch import save

        recipe = _recipe(self.module, self.build, self.build_kwargs)
        if recipe is None:
            return None
        recipe["device"] = str(self.device)
        state = {k: v.detach().to("cpu").contiguous() for k, v in self.module.state_dict().items()}
        return "torch", "safetensors", save(state, metadata=_member_files.metadata(recipe))


def _from_file(data: bytes) -> Policy:
    """A policy back from the bytes ``Policy._metagame_file`` wrote."""
    import torch
    from safetensors.torch import load

    recipe = _member_files.recipe(data)
    build = None
    if "sequential" in recipe:
        module = torch.nn.Sequential(*(getattr(torch.nn, name)(**kwargs) for name, kwargs in recipe["sequential"]))
    else:
        build = _member_files.resolve(recipe["build"])
        module = build(**recipe["kwargs"])
    module.load_state_dict(load(data), strict=True)
    device = torch.device(recipe["device"])
    if device.type == "cuda" and not torch.cuda.is_available():
        device = torch.device("cpu")
    return Policy(module.to(device), device, build=build, build_kwargs=recipe.get("kwargs"))


def policy(module: Any, device: Optional[Any] = None, build: Any = None, build_kwargs: Optional[dict] = None) -> Policy:
    """``module(obs) -> logits`` as a policy ``(obs [B x d] float32, legal [B x A] bool) ->
    probs``; ``build(**build_kwargs)`` rebuilds a module that is not an ``nn.Sequential``
    of ``torch.nn`` layers when a run keeps it (see the module's docstring)."""
    return Policy(module, device, build, build_kwargs)


def to_native(module: Any, path: Union[str, "os.PathLike[str]"]) -> str:
    """Write an ``nn.Sequential(Linear, ReLU, ..., Linear)`` as a safetensors file that
    metagame reads as its native network member; the path, as a string."""
    import torch
    from safetensors.torch import save_file

    layers = list(module)
    kinds = [type(layer) for layer in layers]
    expected = [torch.nn.Linear if i % 2 == 0 else torch.nn.ReLU for i in range(len(layers))]
    if not isinstance(module, torch.nn.Sequential) or not layers or kinds != expected:
        raise ValueError(
            "to_native: an nn.Sequential of Linear layers with a ReLU between each two, got "
            + ", ".join(k.__name__ for k in kinds)
        )
    state = {k: v.detach().to("cpu", torch.float32).contiguous() for k, v in module.state_dict().items()}
    save_file(state, os.fspath(path))
    return os.fspath(path)
