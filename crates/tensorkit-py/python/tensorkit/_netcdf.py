"""A NetCDF variable as it rides in a tensor's attributes (read from a NetCDF file, or from a
Tensogram or zTensor file converted from one, by tensorkit or by tensogram's
``convert-netcdf``): its dimension names from the ``netcdf`` map's ``_dims``, its attributes
in the numpy types netCDF4-python gives them (``_attr_types``: a ``short`` attribute an
``int16``, a list of one a scalar, text ``str``), and whether it holds characters."""

from __future__ import annotations

from typing import Any

import numpy as np

KEY = "netcdf"
# The map's own keys: structure, not attributes.
_INTERNAL = {"_dims", "_file", "_global", "_attr_types", "_global_types", "record_index", "_nc_type"}
_NUMPY = {
    "byte": "i1", "short": "i2", "int": "i4", "float": "f4", "double": "f8", "ubyte": "u1",
    "ushort": "u2", "uint": "u4", "int64": "i8", "uint64": "u8",
    "schar": "i1", "uchar": "u1", "long": "i4", "longlong": "i8", "ulonglong": "u8",
}


def _map(attributes: dict[str, Any]) -> dict[str, Any] | None:
    m = attributes.get(KEY)
    return m if isinstance(m, dict) else None


def dims(attributes: dict[str, Any]) -> list[str] | None:
    """The variable's dimension names, when its attributes carry them."""
    m = _map(attributes)
    d = m.get("_dims") if m else None
    return list(d) if isinstance(d, list) and all(isinstance(x, str) for x in d) else None


def is_char(attributes: dict[str, Any]) -> bool:
    m = _map(attributes)
    return bool(m) and m.get("_nc_type") == "char"


def _typed(value: Any, nc_type: str | None) -> Any:
    if nc_type in _NUMPY and not isinstance(value, (str, dict)):
        a = np.asarray(value, dtype=_NUMPY[nc_type])
        return a[()] if a.ndim == 0 else a
    if nc_type in ("char", "string") and isinstance(value, str):
        return value.rstrip("\0") if nc_type == "char" else value
    return value


def typed_attributes(attributes: dict[str, Any]) -> dict[str, Any] | None:
    """The variable's attributes typed as netCDF4-python types them, in file order; ``None``
    when the attributes carry no NetCDF variable."""
    m = _map(attributes)
    if m is None:
        return None
    types = m.get("_attr_types") if isinstance(m.get("_attr_types"), dict) else {}
    # Those the tensor holds, then those only the map holds (tensogram keeps them there).
    values = {k: v for k, v in attributes.items() if k != KEY}
    for k, v in m.items():
        if k not in _INTERNAL and k not in values:
            values[k] = v
    return _typed_in_order(values, types, m, "order")


def _typed_in_order(values: dict[str, Any], types: dict[str, str], m: dict[str, Any], order_key: str) -> dict[str, Any]:
    """``values`` typed by ``types``, in the order the map's ``_file`` lists under
    ``order_key`` (those it does not list last, as they come)."""
    order = m["_file"].get(order_key) if isinstance(m.get("_file"), dict) else None
    if isinstance(order, list):
        rank = {name: i for i, name in enumerate(order)}
        values = dict(sorted(values.items(), key=lambda kv: rank.get(kv[0], len(rank))))
    return {k: _typed(v, types.get(k)) for k, v in values.items()}


def global_attributes(attributes: dict[str, Any]) -> dict[str, Any] | None:
    """The file's attributes, typed, from a variable's map (``_global``), when it has them."""
    m = _map(attributes)
    if m is None or not isinstance(m.get("_global"), dict):
        return None
    types = m.get("_global_types") if isinstance(m.get("_global_types"), dict) else {}
    return _typed_in_order(m["_global"], types, m, "attributes")
