"""``safetensors.paddle``: the same functions with the same signatures, for paddle tensors.

Change ``from safetensors.paddle import load_file`` to
``from tensorkit.safetensors.paddle import load_file``. Loads hand each tensor to paddle
through DLPack, without a copy on the CPU; ``device`` moves them after.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import paddle

from .._file import File, open_bytes
from ._api import _check_backend, _require_safetensors, open_safetensors, dtype_of, raises_safetensor_errors
from ._api import serialize as _serialize
from ._api import serialize_file as _serialize_file
from ._api import TensorSpec


def _specs(tensors: dict[str, Any]) -> tuple[dict[str, TensorSpec], list]:
    """The tensors as ``TensorSpec``s over their bytes on the host, refusing what
    safetensors refuses (with its exception types)."""
    if not isinstance(tensors, dict):
        raise ValueError(f"Expected a dict of [str, paddle.Tensor] but received {type(tensors)}")
    for name, t in tensors.items():
        if not isinstance(t, paddle.Tensor):
            raise ValueError(f"Key `{name}` is invalid, expected paddle.Tensor but received {type(t)}")
    specs, keep = {}, []
    for name, t in tensors.items():
        if not t.is_contiguous():
            raise ValueError(
                f"You are trying to save a non contiguous tensor: `{name}` which is not allowed. "
                "Call `.contiguous()` on it first."
            )
        host = np.ascontiguousarray(t.cpu().numpy())  # bfloat16 and float8 come as their bits
        keep.append(host)
        dtype = dtype_of(str(t.dtype).split(".")[-1])
        specs[name] = TensorSpec(dtype=dtype, shape=list(t.shape), data=host.reshape(-1).view(np.uint8))
    return specs, keep


@raises_safetensor_errors
def save(tensors: dict[str, Any], metadata: dict[str, str] | None = None) -> bytes:
    """The bytes of a safetensors file holding ``tensors``."""
    specs, keep = _specs(tensors)
    return _serialize(specs, metadata=metadata)


@raises_safetensor_errors
def save_file(
    tensors: dict[str, Any], filename: str | os.PathLike, metadata: dict[str, str] | None = None
) -> None:
    """Writes ``tensors`` to ``filename`` as safetensors, atomically."""
    specs, keep = _specs(tensors)
    _serialize_file(specs, filename, metadata=metadata)


def tensors(f: File, names: list[str] | None, device: Any, backend: str) -> dict[str, Any]:
    """``safe_open``'s tensors for paddle, on ``device``."""
    out = {}
    for name in f if names is None else names:
        t = paddle.utils.dlpack.from_dlpack(f.tensor(name))
        out[name] = t if device in ("cpu", None) else t.to(device)
    return out


def part(f: File, name: str, key: Any, device: Any, backend: str) -> Any:
    """``get_slice(name)[key]`` for paddle: the part of the tensor handed over whole."""
    piece = tensors(f, [name], "cpu", backend)[name][key].clone()
    return piece if device in ("cpu", None) else piece.to(device)


@raises_safetensor_errors
def load(data: bytes, device: str = "cpu") -> dict[str, Any]:
    """The tensors of a safetensors file's bytes, as paddle tensors on ``device``."""
    with open_bytes(data) as f:
        _require_safetensors(f)
        return tensors(f, None, device, "mmap")


@raises_safetensor_errors
def load_file(filename: str | os.PathLike, device: Any = "cpu", *, backend: str = "mmap") -> dict[str, Any]:
    """The tensors of the safetensors file ``filename``, as paddle tensors on ``device``."""
    _check_backend(backend)
    with open_safetensors(filename) as f:
        return tensors(f, None, device, backend)


__all__ = ["load", "load_file", "save", "save_file"]
