"""``safetensors.mlx``: the same functions with the same signatures, for MLX arrays.

Change ``from safetensors.mlx import load_file`` to
``from tensorkit.safetensors.mlx import load_file``. Arrays are written through numpy and
read into MLX arrays (which hold memory of their own).
"""

from __future__ import annotations

import mlx.core as mx
import numpy as np

from ._through_numpy import ThroughNumpy

_api = ThroughNumpy(np.asarray, mx.array)
save, save_file, load, load_file = _api.save, _api.save_file, _api.load, _api.load_file
tensors, part = _api.tensors, _api.part  # safe_open(framework="mlx")

__all__ = ["load", "load_file", "save", "save_file"]
