"""stdlib-js ndarray meta data: the binary record ``@stdlib/ndarray`` writes beside a data
buffer (dtype, shape, byte strides, offset, order, index modes, flags), byte for byte as
@stdlib/ndarray 0.4.1 does.

>>> from tensorkit import stdlib_meta
>>> record = stdlib_meta.serialize({"dtype": "float64", "shape": [2, 3]})
>>> len(record), stdlib_meta.deserialize(record)["strides_bytes"]
(66, [24, 8])

``serialize`` takes the fields as a dict — ``dtype`` and ``shape`` required; ``strides_bytes``
(or ``strides``, in elements), ``offset_bytes`` (or ``offset``), ``order``, ``mode``,
``submodes``, ``flags``, ``readonly`` and ``endianness`` optional, computed as stdlib does
when left out — or a numpy array. ``deserialize`` gives every field back, names and enum
values both. ``view`` checks a record against a data buffer and returns the numpy array it
describes, without copying.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

import numpy as np

from . import _tensorkit
from ._dtypes import from_numpy, to_numpy
from ._errors import InvalidArgumentError

__all__ = ["deserialize", "meta_of", "serialize", "view"]


def meta_of(array: np.ndarray) -> dict[str, Any]:
    """The fields stdlib writes for ``array``: its dtype, shape and byte strides, and the
    offset of its first element from the lowest address it touches (where the data buffer
    handed over with the record must start)."""
    arr = np.asarray(array)
    offset = sum((n - 1) * -s for n, s in zip(arr.shape, arr.strides) if s < 0 and n > 0)
    order = "column-major" if arr.ndim > 1 and arr.flags.f_contiguous and not arr.flags.c_contiguous else "row-major"
    byteorder = arr.dtype.byteorder
    little = byteorder == "<" or (byteorder in "=|" and sys.byteorder == "little")
    return {
        "dtype": from_numpy(arr.dtype),
        "shape": list(arr.shape),
        "strides_bytes": list(arr.strides),
        "offset_bytes": offset,
        "order": order,
        "readonly": not arr.flags.writeable,
        "endianness": "little" if little else "big",
    }


def serialize(meta: Mapping[str, Any] | np.ndarray) -> bytes:
    """The binary record for ``meta`` (a dict of fields, or a numpy array)."""
    if isinstance(meta, np.ndarray):
        meta = meta_of(meta)
    if not isinstance(meta, Mapping):
        raise InvalidArgumentError(f"meta data must be a dict or a numpy array, not {type(meta).__name__}")
    return _tensorkit.stdlib_serialize(dict(meta))


def deserialize(buf: Any) -> dict[str, Any]:
    """Every field of the record in ``buf`` (which it must fill exactly): ``dtype``,
    ``shape``, ``strides_bytes``, ``offset_bytes``, ``order``, ``mode``, ``submodes``,
    ``flags``, ``readonly``, ``endianness`` (1 little, 0 big), ``byte_length`` and the enum
    values."""
    return _tensorkit.stdlib_deserialize(buf)


def view(meta: Any, data: Any) -> np.ndarray:
    """The array the record ``meta`` (bytes, or a dict of fields) describes over ``data``,
    without copying; read-only unless ``data`` is writable and the record is not READONLY.
    Every element is checked to lie inside ``data`` first."""
    record = serialize(meta) if isinstance(meta, Mapping) else bytes(meta)
    checked = _tensorkit.stdlib_check(record, data)
    fields = checked.fields
    dtype = to_numpy(checked.dtype)
    if dtype.itemsize > 1:
        dtype = dtype.newbyteorder("<" if fields["endianness"] == 1 else ">")
    buf = memoryview(data).cast("B")
    arr = np.ndarray(
        tuple(fields["shape"]),
        dtype=dtype,
        buffer=buf,
        offset=fields["offset_bytes"],
        strides=tuple(fields["strides_bytes"]),
    )
    if fields["readonly"]:
        arr.flags.writeable = False
    return arr
