"""The dimension names a tensor's array gets wherever tensorkit shows tensors as named arrays
(the xarray engine, the Zarr store, the VirtualiZarr parsers): the caller's ``dim_names``,
else the tensor's own ``dim_names`` attribute, else its NetCDF variable's (``netcdf`` map's
``_dims``), else the file's ``dim_names`` map, else the
grid's; a one-dimensional tensor named like another's dimension is that dimension's
coordinate; the rest ``dim_0, dim_1...``, prefixed with the tensor's name where two tensors
would give one name two sizes."""

from __future__ import annotations

import json
from typing import Any

from . import _netcdf
from ._file import File


def _dims_from(value: Any) -> dict[str, list[str]] | None:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return None
    return value if isinstance(value, dict) else None


def dimension_names(
    f: File, infos: dict[str, dict[str, Any]], dim_names: Any, grid_dims: dict[str, list[str]]
) -> dict[str, tuple[str, ...]]:
    file_dims = _dims_from((f.metadata or {}).get("dim_names")) or {}
    chosen: dict[str, tuple[str, ...] | None] = {}
    for name, info in infos.items():
        ndim = len(info["shape"])
        candidates = [
            dim_names.get(name) if isinstance(dim_names, dict) else dim_names,
            info["attributes"].get("dim_names"),
            _netcdf.dims(info["attributes"]),
            file_dims.get(name),
            grid_dims.get(name),
        ]
        dims = next(
            (tuple(c) for c in candidates if isinstance(c, (list, tuple)) and len(c) == ndim),
            None,
        )
        chosen[name] = dims
    # A one-dimensional tensor named like a dimension of another is its coordinate.
    named = {d: n for name, dims in chosen.items() if dims for d, n in zip(dims, infos[name]["shape"])}
    for name, info in infos.items():
        if chosen[name] is None and len(info["shape"]) == 1 and named.get(name) == info["shape"][0]:
            chosen[name] = (name,)
    # Defaults: dim_<i>, unless two variables would give one name two sizes.
    sizes: dict[str, set[int]] = {}
    for name, info in infos.items():
        if chosen[name] is None:
            for i, n in enumerate(info["shape"]):
                sizes.setdefault(f"dim_{i}", set()).add(n)
    clash = any(len(s) > 1 for s in sizes.values())
    out = {}
    for name, info in infos.items():
        dims = chosen[name]
        if dims is None:
            prefix = f"{name}_" if clash else ""
            dims = tuple(f"{prefix}dim_{i}" for i in range(len(info["shape"])))
        out[name] = dims
    return out
