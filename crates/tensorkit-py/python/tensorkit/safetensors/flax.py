"""``safetensors.flax``: the same functions with the same signatures, for jax arrays.

Change ``from safetensors.flax import load_file`` to
``from tensorkit.safetensors.flax import load_file``. Arrays are written through numpy (on
the host) and read into jax arrays on jax's default device.
"""

from __future__ import annotations

import numpy as np
from jax import numpy as jnp

from ._through_numpy import ThroughNumpy

_api = ThroughNumpy(np.asarray, jnp.array)
save, save_file, load, load_file = _api.save, _api.save_file, _api.load, _api.load_file
tensors, part = _api.tensors, _api.part  # safe_open(framework="flax")

__all__ = ["load", "load_file", "save", "save_file"]
