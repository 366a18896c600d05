"""tensorkit dtype names and numpy dtypes, both ways.

The machine-learning floats numpy lacks (bfloat16, the float8 family, float6, float4) are
``ml_dtypes`` types; 4- and 6-bit floats hold one element per byte, as ``ml_dtypes`` does.
A bitmask reads as ``bool``.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from . import _tensorkit
from ._errors import UnsupportedError

# The table is tensorkit's own (``_tensorkit.dtypes()``): tensorkit name -> numpy's name, for
# numpy's types, and -> the ``ml_dtypes`` attribute, for the machine-learning floats.
_TABLE = _tensorkit.dtypes()
_NUMPY = {d["name"]: d["numpy"] for d in _TABLE if d["numpy"] and not d["ml_dtypes"] and d["name"] != "bitmask"}
_ML_DTYPES = {d["name"]: d["numpy"] for d in _TABLE if d["ml_dtypes"]}

_FROM_NUMPY = {v: k for k, v in _NUMPY.items()}
_FROM_ML = {v: k for k, v in _ML_DTYPES.items()}


def _ml_dtypes(name: str):
    try:
        import ml_dtypes
    except ImportError as e:  # pragma: no cover - ml_dtypes is a dependency
        raise UnsupportedError(f"dtype {name} needs the ml_dtypes package") from e
    return ml_dtypes


def to_numpy(name: str) -> np.dtype:
    """The numpy dtype arrays of tensorkit dtype ``name`` have."""
    if name == "bitmask":
        return np.dtype(np.bool_)
    if name in _NUMPY:
        return np.dtype(_NUMPY[name])
    if name in _ML_DTYPES:
        return np.dtype(getattr(_ml_dtypes(name), _ML_DTYPES[name]))
    if name not in {d["name"] for d in _TABLE}:
        raise UnsupportedError(f"unknown dtype {name!r}")
    raise UnsupportedError(f"numpy has no type for dtype {name}")


def from_numpy(dtype: np.dtype) -> str:
    """The tensorkit dtype name of numpy dtype ``dtype`` (any byte order)."""
    name = np.dtype(dtype).name
    if name in _FROM_NUMPY:
        return _FROM_NUMPY[name]
    if name in _FROM_ML:
        return _FROM_ML[name]
    raise UnsupportedError(f"tensorkit has no dtype for numpy dtype {name}")


def array_of(native: Any) -> np.ndarray:
    """The numpy array over a native ``Array``'s bytes (no copy): its dtype in its bytes'
    byte order, its shape."""
    dtype = to_numpy(native.dtype)
    if dtype.itemsize > 1 and native.byte_order != sys.byteorder:
        dtype = dtype.newbyteorder("<" if native.byte_order == "little" else ">")
    return np.frombuffer(native.data, dtype=dtype).reshape(native.shape)
