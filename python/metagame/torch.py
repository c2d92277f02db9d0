"""A PyTorch module as a metagame policy, and an ``nn.Sequential`` of ``Linear`` and
``ReLU`` layers as the native network member: a few lines over the callable contract
``policy(obs, legal) -> probs``.

``policy(module)`` runs the module on its own device under ``torch.no_grad()``, the numpy
batch taken without a copy on the CPU (``torch.from_numpy``), the logits of illegal actions
masked and a softmax taken. ``to_native(module, path)`` writes the module's ``state_dict``
as safetensors, the layout metagame's own network member reads (``FILE.safetensors`` is a
policy everywhere a policy is named), which then plays at Rust speed without Python.
"""

from __future__ import annotations

import os
from typing import Any, Optional, Union

import numpy as _np


class Policy:
    """A module as a callable policy (see the module's docstring). It pickles as the module
    (PyTorch's own pickling: the class by reference, the tensors by value) and its device."""

    def __init__(self, module: Any, device: Optional[Any] = None) -> None:
        import torch

        self.module = module
        self.device = next(module.parameters(), torch.empty(0)).device if device is None else device
        self.__name__ = type(module).__name__

    def __call__(self, obs: _np.ndarray, legal: _np.ndarray) -> _np.ndarray:
        import torch

        with torch.no_grad():
            x = torch.from_numpy(obs).to(self.device)
            mask = torch.from_numpy(legal).to(self.device)
            logits = self.module(x).masked_fill(~mask, float("-inf"))
            return torch.softmax(logits, dim=-1).cpu().numpy()


def policy(module: Any, device: Optional[Any] = None) -> Policy:
    """``module(obs) -> logits`` as a policy ``(obs [B x d] float32, legal [B x A] bool) -> probs``."""
    return Policy(module, device)


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
