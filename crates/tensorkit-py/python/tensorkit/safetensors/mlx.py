"""``safetensors.mlx``: the same functions with the same signatures, for MLX arrays.

Change ``from safetensors.mlx import load_file`` to
``from tensorkit.safetensors.mlx import load_file``. Arrays are written through numpy and
read into MLX arrays (which hold memory of their own).
"""

from __future__ import annotations

import os
from typing import Any

import mlx.core as mx
import numpy as np

from . import numpy as _numpy
from . import raises_safetensor_errors


def _to_numpy(tensors: dict[str, Any]) -> dict[str, np.ndarray]:
    return {k: np.asarray(v) for k, v in tensors.items()}


def _to_mlx(arrays: dict[str, np.ndarray]) -> dict[str, Any]:
    return {k: mx.array(v) for k, v in arrays.items()}


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
    """The tensors of a safetensors file's bytes, as MLX arrays."""
    return _to_mlx(_numpy.load(data))


@raises_safetensor_errors
def load_file(filename: str | os.PathLike, *, backend: str = "mmap") -> dict[str, Any]:
    """The tensors of the safetensors file ``filename``, as MLX arrays."""
    return _to_mlx(_numpy.load_file(filename, backend=backend))


# safe_open(framework="mlx").
def tensors(f: Any, names: list[str] | None, device: Any, backend: str) -> dict[str, Any]:
    return _to_mlx(_numpy.tensors(f, names, device, backend))


def part(f: Any, name: str, key: Any, device: Any, backend: str) -> Any:
    return mx.array(_numpy.part(f, name, key, device, backend))


__all__ = ["load", "load_file", "save", "save_file"]
