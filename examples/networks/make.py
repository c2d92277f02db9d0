#!/usr/bin/env python3
"""Writes the example networks of this folder: state_dicts of PyTorch's
`nn.Sequential(Linear, ReLU, Linear, ReLU, Linear)` with its default initialisation
(U(-1/sqrt(in), 1/sqrt(in)) for weights and biases), drawn by numpy and saved with
`safetensors.numpy.save_file` (the file format and key names of
`safetensors.torch.save_file(model.state_dict(), path)`).

    python3 examples/networks/make.py      # needs numpy and safetensors

Each network reads its game's OpenSpiel tensor (Leduc's information-state tensor of 30
values, connect four's observation tensor of 3 x 6 x 7) and has one output per action.
"""

import os

import numpy as np
from safetensors.numpy import save_file

HERE = os.path.dirname(os.path.abspath(__file__))


def network(sizes, seed):
    rng = np.random.default_rng(seed)
    layers = {}
    for k, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        bound = 1.0 / np.sqrt(n_in)
        layers[f"{2 * k}.weight"] = rng.uniform(-bound, bound, (n_out, n_in)).astype(np.float32)
        layers[f"{2 * k}.bias"] = rng.uniform(-bound, bound, (n_out,)).astype(np.float32)
    return layers


for name, sizes, seed in [
    ("leduc_a", [30, 64, 64, 3], 1),
    ("leduc_b", [30, 64, 64, 3], 2),
    ("connect_four_a", [126, 64, 64, 7], 3),
    ("connect_four_b", [126, 64, 64, 7], 4),
]:
    save_file(network(sizes, seed), os.path.join(HERE, f"{name}.safetensors"))
