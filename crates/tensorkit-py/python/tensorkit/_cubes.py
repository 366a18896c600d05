"""GRIB fields as cfgrib-style hypercubes for the xarray engine.

The cube itself (which field fills which cell, the coordinates and attributes) is worked out
in Rust (``tensor_grib::cube``); this module turns its answer into xarray variables whose
values are read lazily, one GRIB message (or Tensogram object) per dask chunk.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xarray import Dataset, Variable
from xarray.backends import BackendArray
from xarray.core import indexing

from . import _tensorkit
from ._dtypes import to_numpy
from ._open_files import cached as _cached

# The keyword arguments cfgrib's engine takes that mean something here.
CUBE_PARAMETERS = (
    "filter_by_keys",
    "read_keys",
    "time_dims",
    "extra_coords",
    "values_dtype",
    "indexpath",
    "errors",
)


def has_grib_keys(f: Any) -> bool:
    """Whether the file's tensors are GRIB fields (a GRIB file, or one converted from GRIB
    that kept the fields' keys), as tensorkit tells them (``tensor_grib::cube::is_field``)."""
    return _tensorkit.holds_grib_fields(f._native)


class CubeBackendArray(BackendArray):
    """One variable of a cube, read when indexed: each cell of its header dimensions is one
    field (a tensor of the file), missing cells NaN. Pickles as the file's paths and the
    fields' names."""

    def __init__(self, paths: tuple[str, ...], fields: list[str | None], shape: tuple[int, ...], grid_ndim: int, dtype: np.dtype):
        self.paths, self.fields, self.shape, self.grid_ndim = paths, fields, shape, grid_ndim
        self.dtype = np.dtype(dtype)
        self.header_shape = shape[: len(shape) - grid_ndim]

    def __getitem__(self, key: indexing.ExplicitIndexer) -> np.ndarray:
        return indexing.explicit_indexing_adapter(
            key, self.shape, indexing.IndexingSupport.BASIC, self._raw_indexing_method
        )

    def _raw_indexing_method(self, key: tuple) -> np.ndarray:
        nh = len(self.header_shape)
        header_key, grid_key = key[:nh], key[nh:]
        # The header cells asked for, per dimension; an integer drops its dimension.
        ranges = [np.arange(n)[k] for n, k in zip(self.header_shape, header_key)]
        dims_kept = [not isinstance(k, (int, np.integer)) for k in header_key]
        cells = np.ix_(*[np.atleast_1d(r) for r in ranges]) if ranges else ()
        index = np.ravel_multi_index(cells, self.header_shape) if ranges else np.zeros((), dtype=np.intp)
        f = _cached(self.paths)
        out = None
        # Fields are decoded into one buffer, reused: a new one per field would leave the
        # process holding more memory than the cube (freed blocks the allocator keeps).
        scratch = None
        for pos, cell in np.ndenumerate(index):
            name = self.fields[int(cell)]
            if name is None:
                continue
            scratch = _decoded(f, name, scratch)
            # The field as the grid's dimensions hold it (a Mercator field's rows are one
            # `values` dimension).
            values = scratch.reshape(self.shape[nh:])[grid_key]
            if out is None:
                out = np.full(index.shape + values.shape, np.nan, dtype=self.dtype)
            out[pos] = values
        if out is None:
            grid_shape = np.empty(self.shape[nh:], dtype=np.bool_)[grid_key].shape
            out = np.full(index.shape + grid_shape, np.nan, dtype=self.dtype)
        squeeze = tuple(i for i, kept in enumerate(dims_kept) if not kept)
        return out.squeeze(axis=squeeze) if squeeze else out


def _decoded(f: Any, name: str, scratch: np.ndarray | None) -> np.ndarray:
    """Field ``name``'s values: decoded into ``scratch`` when it is a buffer of the field's
    dtype and shape, else into a new one (which later fields reuse). The file's pages read
    for it are handed back once it is decoded: a file read through once would otherwise stay
    resident beside the values (cfgrib reads with ``fread``, whose pages never count)."""
    (placement,) = f._native.layout([name])
    dtype, shape = to_numpy(placement.dtype), tuple(placement.shape)
    if scratch is None or scratch.dtype != dtype or scratch.shape != shape:
        scratch = np.empty(shape, dtype=dtype)
    f._native.read_into(name, memoryview(scratch).cast("B"))
    f._native.release_pages()
    return scratch


def _coordinate_values(c: dict[str, Any]) -> np.ndarray:
    kind, values = c["kind"], c["values"]
    if kind == "datetime":
        data = np.array(values, dtype="datetime64[s]").astype("datetime64[ns]")
    elif kind == "timedelta":
        data = np.array(values, dtype="timedelta64[s]").astype("timedelta64[ns]")
    elif kind == "int":
        data = np.array(values, dtype=np.int64)
    elif kind == "float":
        data = np.array(values, dtype=np.float64)
    else:
        data = np.array(values)
    return data.reshape(()) if not c["dims"] else data


def cube_dataset(paths: tuple[str, ...], cube: dict[str, Any], dtype: Any, drop: set[str]) -> Dataset:
    """The xarray dataset of one cube, its values read lazily."""
    coords = {}
    for c in cube["coordinates"]:
        data = _coordinate_values(c)
        if len(c["dims"]) > 1:
            data = data.reshape(tuple(cube["dims"][d] for d in c["dims"]))
        coords[c["name"]] = Variable(tuple(c["dims"]), data, attrs=c["attributes"])
    data_vars = {}
    for v in cube["variables"]:
        if v["name"] in drop:
            continue
        shape = tuple(v["shape"])
        array = CubeBackendArray(paths, v["fields"], shape, v["grid_ndim"], dtype)
        var = Variable(tuple(v["dims"]), indexing.LazilyIndexedArray(array), attrs=v["attributes"])
        header = len(shape) - v["grid_ndim"]
        var.encoding["preferred_chunks"] = {
            d: (1 if i < header else n) for i, (d, n) in enumerate(zip(v["dims"], shape))
        }
        var.encoding["dtype"] = np.dtype(dtype)
        var.encoding["source"] = paths[0] if len(paths) == 1 else list(paths)
        data_vars[v["name"]] = var
    coords = {k: v for k, v in coords.items() if k not in drop}
    ds = Dataset(data_vars, coords=coords, attrs=cube["attributes"])
    return ds


def options(
    filter_by_keys: dict[str, Any] | None = None,
    read_keys: Any = (),
    time_dims: Any = ("time", "step"),
    extra_coords: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The cube options as ``_tensorkit.grib_cubes`` takes them, from the engine's keyword
    arguments (``None`` and tuples allowed)."""
    return {
        "filter_by_keys": dict(filter_by_keys or {}),
        "read_keys": list(read_keys or ()),
        "time_dims": list(time_dims or ("time", "step")),
        "extra_coords": dict(extra_coords or {}),
    }


def cubes(f: Any, tree: bool, **kwargs: Any) -> list[dict[str, Any]]:
    """The file's cubes, as tensor_grib::cube builds them, for the engine's keyword
    arguments."""
    picked = options(*(kwargs.get(k) for k in ("filter_by_keys", "read_keys", "time_dims", "extra_coords")))
    return _tensorkit.grib_cubes(f._native, tree=tree, **picked)
