"""tensorkit dtype names and numpy dtypes, both ways.

The machine-learning floats numpy lacks (bfloat16, the float8 family, float6, float4) are
``ml_dtypes`` types; 4- and 6-bit floats hold one element per byte, as ``ml_dtypes`` does.
A bitmask reads as ``bool``.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from ._errors import UnsupportedError

_NUMPY = {
    "bool": "bool",
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int64": "int64",
    "uint8": "uint8",
    "uint16": "uint16",
    "uint32": "uint32",
    "uint64": "uint64",
    "float16": "float16",
    "float32": "float32",
    "float64": "float64",
    "complex64": "complex64",
    "complex128": "complex128",
}

# tensorkit name -> ml_dtypes attribute.
_ML_DTYPES = {
    "bfloat16": "bfloat16",
    "float8_e4m3": "float8_e4m3fn",
    "float8_e5m2": "float8_e5m2",
    "float8_e4m3fnuz": "float8_e4m3fnuz",
    "float8_e5m2fnuz": "float8_e5m2fnuz",
    "float8_e8m0": "float8_e8m0fnu",
    "float6_e2m3": "float6_e2m3fn",
    "float6_e3m2": "float6_e3m2fn",
    "float4_e2m1": "float4_e2m1fn",
}

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
