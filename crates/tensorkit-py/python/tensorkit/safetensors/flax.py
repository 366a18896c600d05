"""``safetensors.flax``: the same functions with the same signatures, for jax arrays.

Change ``from safetensors.flax import load_file`` to
``from tensorkit.safetensors.flax import load_file``. Arrays are written through numpy (on
the host) and read into jax arrays on jax's default device.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from jax import numpy as jnp

from . import numpy as _numpy
from . import raises_safetensor_errors


def _to_numpy(tensors: dict[str, Any]) -> dict[str, np.ndarray]:
    return {k: np.asarray(v) for k, v in tensors.items()}


def _to_jax(arrays: dict[str, np.ndarray]) -> dict[str, Any]:
    return {k: jnp.array(v) for k, v in arrays.items()}


@raises_safetensor_errors
def save(tensors: dict[str, Any], metadata: dict[str, str] | None = None) -> bytes:
    """The bytes of a safetensors file holding ``tensors``."""
    return _numpy.save(_to_numpy(tensors), metadata=metadata)


@raises_safetensor_errors
def save_file(
    tensors: dict[str, Any], filename: str | os.PathLike, metadata: dict[str, str] | None = None
) -> None:
    """Writes ``tensors`` to ``filename`` as safetensors, atomically."""
    _numpy.save_file(_to_numpy(tensors), filename, metadata=metadata)


@raises_safetensor_errors
def load(data: bytes) -> dict[str, Any]:
    """The tensors of a safetensors file's bytes, as jax arrays."""
    return _to_jax(_numpy.load(data))


@raises_safetensor_errors
def load_file(filename: str | os.PathLike, *, backend: str = "mmap") -> dict[str, Any]:
    """The tensors of the safetensors file ``filename``, as jax arrays."""
    return _to_jax(_numpy.load_file(filename, backend=backend))


# safe_open(framework="flax").
def tensors(f: Any, names: list[str] | None, device: Any, backend: str) -> dict[str, Any]:
    return _to_jax(_numpy.tensors(f, names, device, backend))


def part(f: Any, name: str, key: Any, device: Any, backend: str) -> Any:
    return jnp.array(_numpy.part(f, name, key, device, backend))


__all__ = ["load", "load_file", "save", "save_file"]
