"""A drop-in for ``safetensors.numpy``: the same functions with the same signatures.

Change ``from safetensors.numpy import load_file`` to
``from tensorkit.safetensors import load_file`` and nothing else. What is read comes back as
writable arrays, as with safetensors; ``tensorkit.open`` gives zero-copy views instead.
Files are written by tensorkit's safetensors writer, which the ``safetensors`` package reads.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from . import _tensorkit as _native
from ._dtypes import to_numpy
from ._errors import InvalidArgumentError, UnsupportedError
from ._file import File, PathLike, open, open_bytes, save as _save, serialize

# tensorkit dtype -> safetensors' dtype string (what safe_open's get_dtype reports), from
# the Rust crate's own table.
_SAFETENSORS_DTYPES = dict(_native.safetensors_dtypes())


def _check(tensor_dict: dict[str, np.ndarray], metadata: dict[str, str] | None) -> None:
    if metadata is not None and not all(
        isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()
    ):
        raise InvalidArgumentError("safetensors metadata maps str to str")
    for name, value in tensor_dict.items():
        if not isinstance(value, np.ndarray):
            raise InvalidArgumentError(f"tensor {name!r} is not a numpy array")


def save(tensor_dict: dict[str, np.ndarray], metadata: dict[str, str] | None = None) -> bytes:
    """The bytes of a safetensors file holding ``tensor_dict``."""
    _check(tensor_dict, metadata)
    return serialize(tensor_dict, "safetensors", metadata=metadata)


def save_file(
    tensor_dict: dict[str, np.ndarray],
    filename: PathLike,
    metadata: dict[str, str] | None = None,
) -> None:
    """Writes ``tensor_dict`` to ``filename`` as safetensors (atomically)."""
    _check(tensor_dict, metadata)
    _save(filename, tensor_dict, metadata=metadata, format="safetensors")


def _load_all(f: File) -> dict[str, np.ndarray]:
    if f.format != "safetensors":
        raise UnsupportedError(f"{f.path}: a {f.format} file, not safetensors")
    return {name: _owned(f, name) for name in f}


def _owned(f: File, name: str) -> np.ndarray:
    """Tensor ``name`` decoded into a new, writable array."""
    info = f.info(name)
    return f.get(name, out=np.empty(info["shape"], dtype=to_numpy(info["dtype"])))


def load(data: bytes) -> dict[str, np.ndarray]:
    """The tensors of a safetensors file's bytes."""
    with open_bytes(data) as f:
        return _load_all(f)


def _check_backend(backend: str) -> None:
    if backend not in ("mmap", "pread"):
        raise InvalidArgumentError(f"backend {backend!r}: one of 'mmap', 'pread'")


def load_file(filename: PathLike, *, backend: str = "mmap") -> dict[str, np.ndarray]:
    """The tensors of the safetensors file ``filename``. The file is memory-mapped whatever
    ``backend`` says (``"mmap"`` or ``"pread"``, accepted as safetensors accepts them)."""
    _check_backend(backend)
    with open(filename) as f:
        return _load_all(f)


class _Slice:
    """A tensor read lazily: its shape and dtype, and ``[...]`` to read part of it."""

    def __init__(self, f: File, name: str):
        self._f, self._name = f, name

    def get_shape(self) -> list[int]:
        return list(self._f.info(self._name)["shape"])

    def get_dtype(self) -> str:
        return _SAFETENSORS_DTYPES[self._f.info(self._name)["dtype"]]

    def __getitem__(self, key: Any) -> np.ndarray:
        return np.array(self._f[self._name][key])


class safe_open:
    """``safe_open(filename, framework="numpy")``: a lazy handle on a safetensors file, as
    in safetensors (only the numpy framework)."""

    def __init__(self, filename: PathLike, framework: str, device: str = "cpu", backend: str = "mmap"):
        _check_backend(backend)
        if framework not in ("np", "numpy"):
            raise UnsupportedError(
                f"framework {framework!r}: tensorkit.safetensors returns numpy arrays "
                "(framework='numpy')"
            )
        if device != "cpu":
            raise UnsupportedError(f"device {device!r}: numpy arrays live on the cpu")
        self._f = open(os.fspath(filename))
        if self._f.format != "safetensors":
            fmt = self._f.format
            self._f.close()
            raise UnsupportedError(f"{filename}: a {fmt} file, not safetensors")

    def keys(self) -> list[str]:
        """Tensor names, sorted."""
        return sorted(self._f)

    def offset_keys(self) -> list[str]:
        """Tensor names in the order their data is stored."""
        return list(self._f)

    def metadata(self) -> dict[str, str] | None:
        return self._f.metadata

    def get_tensor(self, name: str) -> np.ndarray:
        return _owned(self._f, name)  # KeyError when there is no such tensor

    def get_tensors(self) -> dict[str, np.ndarray]:
        return {name: self.get_tensor(name) for name in self.keys()}

    def get_slice(self, name: str) -> _Slice:
        if name not in self._f:
            raise KeyError(name)
        return _Slice(self._f, name)

    def __enter__(self) -> safe_open:
        return self

    def __exit__(self, *exc: object) -> None:
        self._f.close()


__all__ = ["load", "load_file", "safe_open", "save", "save_file"]
