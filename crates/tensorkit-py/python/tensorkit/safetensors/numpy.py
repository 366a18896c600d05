"""``safetensors.numpy``: the same functions with the same signatures.

Change ``from safetensors.numpy import load_file`` to
``from tensorkit.safetensors.numpy import load_file`` and nothing else. What is read comes
back as writable arrays, as with safetensors; ``tensorkit.open`` gives zero-copy views
instead. Files are written by tensorkit's safetensors writer, which the ``safetensors``
package reads.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from .. import _tensorkit
from .._dtypes import to_numpy
from .._errors import InvalidArgumentError
from .._file import File, PathLike, _entries, open_bytes
from ._api import _check_backend, _require_safetensors, check_metadata, open_safetensors, raises_safetensor_errors, reference_options
# What safetensors.numpy re-exports of the package, as it does.
from ._api import TensorSpec, deserialize, safe_open, serialize, serialize_file  # noqa: F401


def _check(tensor_dict: dict[str, np.ndarray], metadata: dict[str, str] | None) -> None:
    check_metadata(metadata)
    for name, value in tensor_dict.items():
        if not isinstance(value, np.ndarray):
            raise InvalidArgumentError(f"tensor {name!r} is not a numpy array")


@raises_safetensor_errors
def save(tensor_dict: dict[str, np.ndarray], metadata: dict[str, str] | None = None) -> bytes:
    """The bytes of a safetensors file holding ``tensor_dict``."""
    _check(tensor_dict, metadata)
    return _tensorkit.serialize(_entries(tensor_dict), reference_options(metadata))


@raises_safetensor_errors
def save_file(
    tensor_dict: dict[str, np.ndarray],
    filename: PathLike,
    metadata: dict[str, str] | None = None,
) -> None:
    """Writes ``tensor_dict`` to ``filename`` as safetensors (atomically)."""
    _check(tensor_dict, metadata)
    _tensorkit.save(os.fspath(filename), _entries(tensor_dict), reference_options(metadata))


def _owned(f: File, name: str) -> np.ndarray:
    """Tensor ``name`` decoded into a new, writable array."""
    info = f.info(name)
    return f.get(name, out=np.empty(info["shape"], dtype=to_numpy(info["dtype"])))


def tensors(f: File, names: list[str] | None, device: Any, backend: str) -> dict[str, np.ndarray]:
    """``safe_open``'s tensors for numpy: new, writable arrays."""
    return {name: _owned(f, name) for name in (f if names is None else names)}


def part(f: File, name: str, key: Any, device: Any, backend: str) -> np.ndarray:
    """``get_slice(name)[key]`` for numpy."""
    return np.array(f[name][key])


@raises_safetensor_errors
def load(data: bytes) -> dict[str, np.ndarray]:
    """The tensors of a safetensors file's bytes."""
    with open_bytes(data) as f:
        _require_safetensors(f)
        return tensors(f, None, "cpu", "mmap")


@raises_safetensor_errors
def load_file(filename: PathLike, *, backend: str = "mmap") -> dict[str, np.ndarray]:
    """The tensors of the safetensors file ``filename``, as new writable arrays."""
    _check_backend(backend)
    with open_safetensors(filename) as f:
        return tensors(f, None, "cpu", backend)


__all__ = ["load", "load_file", "save", "save_file"]
