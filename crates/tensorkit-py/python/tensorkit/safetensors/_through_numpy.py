"""The safetensors modules of frameworks whose arrays go through numpy (flax, mlx): one
implementation, given how the framework's arrays become numpy arrays and back."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

from . import numpy as _numpy
from ._api import raises_safetensor_errors


class ThroughNumpy:
    """``save``, ``save_file``, ``load``, ``load_file`` (safetensors' signatures) and
    ``safe_open``'s handlers for a framework whose arrays ``to_numpy`` turns into numpy
    arrays and ``from_numpy`` makes from them."""

    def __init__(self, to_numpy: Callable[[Any], np.ndarray], from_numpy: Callable[[np.ndarray], Any]):
        self._to, self._from = to_numpy, from_numpy

    def _np(self, tensors: dict[str, Any]) -> dict[str, np.ndarray]:
        return {k: self._to(v) for k, v in tensors.items()}

    def _fw(self, arrays: dict[str, np.ndarray]) -> dict[str, Any]:
        return {k: self._from(v) for k, v in arrays.items()}

    @raises_safetensor_errors
    def save(self, tensors: dict[str, Any], metadata: dict[str, str] | None = None) -> bytes:
        """The bytes of a safetensors file holding ``tensors``."""
        return _numpy.save(self._np(tensors), metadata=metadata)

    @raises_safetensor_errors
    def save_file(
        self, tensors: dict[str, Any], filename: str | os.PathLike, metadata: dict[str, str] | None = None
    ) -> None:
        """Writes ``tensors`` to ``filename`` as safetensors, atomically."""
        _numpy.save_file(self._np(tensors), filename, metadata=metadata)

    @raises_safetensor_errors
    def load(self, data: bytes) -> dict[str, Any]:
        """The tensors of a safetensors file's bytes."""
        return self._fw(_numpy.load(data))

    @raises_safetensor_errors
    def load_file(self, filename: str | os.PathLike, *, backend: str = "mmap") -> dict[str, Any]:
        """The tensors of the safetensors file ``filename``."""
        return self._fw(_numpy.load_file(filename, backend=backend))

    def tensors(self, f: Any, names: list[str] | None, device: Any, backend: str) -> dict[str, Any]:
        """``safe_open``'s tensors."""
        return self._fw(_numpy.tensors(f, names, device, backend))

    def part(self, f: Any, name: str, key: Any, device: Any, backend: str) -> Any:
        """``get_slice(name)[key]``."""
        return self._from(_numpy.part(f, name, key, device, backend))
