"""An xarray backend: ``xr.open_dataset(path, engine="tensorkit")`` for every format
tensorkit reads.

Each tensor is a variable, read lazily: with ``chunks={}`` each becomes one dask chunk, and
the lazy arrays pickle as a path and a name, so dask workers in other processes reopen the
file themselves. Dimension names come from, in order: the ``dim_names`` argument (a list
for every variable, or a dict of variable -> list); a tensor's ``dim_names`` attribute
(zTensor attributes, a Tensogram object's ``base`` entry); the file metadata's
``dim_names`` (a dict of variable -> list, or its JSON text for safetensors); else
``dim_0, dim_1, ...`` (``<variable>_dim_0, ...`` where sizes would clash). A one-dimensional
tensor named like a dimension becomes that dimension's coordinate. Attributes and the file
metadata become variable and dataset attributes.

GRIB files, and files converted from GRIB whose tensors kept the fields' keys, open as
cfgrib's hypercubes instead: one variable per parameter named as cfgrib names it (``t``,
``t2m``, ``u10``), dimensions ``number``, ``time``, ``step``, the level type's name, then the
grid's (``latitude``/``longitude``, ``y``/``x`` or ``values``), ``valid_time``, CF and
``GRIB_*`` attributes, float32 values (``values_dtype=np.float64`` for float64), missing
points as NaN, one dask chunk per field. cfgrib's ``filter_by_keys``, ``read_keys``,
``time_dims`` and ``extra_coords`` work as in cfgrib; ``indexpath`` is accepted and no index
file is ever written. A file that is not one cube is refused with the ``filter_by_keys``
that picks each of its cubes; ``xr.open_datatree(path, engine="tensorkit")`` gives them all,
one group each.

Other fields on a regular latitude/longitude grid (tensors whose attributes carry ecCodes'
grid keys without the rest) get dimensions ``latitude`` and ``longitude`` with their
coordinates (``latitude_1``, ``longitude_1`` ... for a second grid), unless dimension names
are given.
"""

from __future__ import annotations

import io
import json
import os
from typing import Any

import numpy as np
from xarray import Dataset, Variable
from xarray.backends import BackendArray, BackendEntrypoint
from xarray.core import indexing

from . import _cubes, _netcdf, _tensorkit
from ._dims import dimension_names as _dimension_names
from ._dtypes import to_numpy
from ._file import File, open
from ._open_files import cached as _cached

# Every extension of every format tensorkit reads, from the format registry.
_EXTENSIONS = tuple(sorted({f".{e}" for f in _tensorkit.formats() for e in f["extensions"]}))
_NETCDF_EXTENSIONS = tuple(f".{e}" for f in _tensorkit.formats() if f["id"] == "netcdf" for e in f["extensions"])

# CF decoding, for files whose tensors carry NetCDF variables (as xarray's own engines).
_CF_PARAMETERS = ("mask_and_scale", "decode_times", "concat_characters", "decode_coords", "use_cftime", "decode_timedelta")


class TensorkitBackendArray(BackendArray):
    """One tensor, read when indexed. Pickles as its file's path and its name."""

    def __init__(self, paths: tuple[str, ...], name: str, shape: tuple[int, ...], dtype: np.dtype):
        self.paths, self.name, self.shape, self.dtype = paths, name, shape, dtype

    def __getitem__(self, key: indexing.ExplicitIndexer) -> np.ndarray:
        return indexing.explicit_indexing_adapter(
            key, self.shape, indexing.IndexingSupport.BASIC, self._raw_indexing_method
        )

    def _raw_indexing_method(self, key: tuple) -> np.ndarray:
        # A copy of the part asked for: the result owns its memory, not the file's map.
        part = np.array(_cached(self.paths)[self.name][key])
        return part.view(self.dtype) if self.dtype.kind == "S" else part


def _grids(f: File, infos: dict[str, dict[str, Any]]) -> tuple[dict[str, list[str]], dict[str, tuple[np.ndarray, str]]]:
    """Dimension names for the variables on regular lat/lon grids, and their coordinates with
    their units (names, units and values from ecCodes' keys among their attributes, worked out
    in Rust): one pair of dimensions per distinct grid, the second one's names suffixed ``_1``."""
    dims: dict[str, list[str]] = {}
    coords: dict[str, tuple[np.ndarray, str]] = {}
    seen: list[tuple[np.ndarray, ...]] = []
    for name in infos:
        axes = f._native.grid_axes(name)
        if axes is None:
            continue
        g = tuple(np.array(values) for _, _, values in axes)
        k = next((i for i, s in enumerate(seen) if all(np.array_equal(a, b) for a, b in zip(s, g))), None)
        if k is None:
            k = len(seen)
            seen.append(g)
        suffix = f"_{k}" if k else ""
        dims[name] = [f"{axis}{suffix}" for axis, _, _ in axes]
        for (axis, units, _), values in zip(axes, g):
            coords[f"{axis}{suffix}"] = (values, units)
    return dims, coords


def _attribute_value(v: Any) -> Any:
    """Attributes netCDF-style tools accept: nested values as JSON text."""
    return json.dumps(v) if isinstance(v, (dict, list)) and not _flat_list(v) else v


def _flat_list(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, (int, float, str)) for x in v)


class TensorkitBackendEntrypoint(BackendEntrypoint):
    """``engine="tensorkit"``: safetensors, BinTensors, zTensor and Tensogram files."""

    description = "Tensor files (Tensogram, GRIB, safetensors, zTensor, BinTensors, GGUF) through tensorkit"
    url = "https://example.invalid/tensorkit/docs/python.md"
    open_dataset_parameters = ("filename_or_obj", "drop_variables", "dim_names") + _cubes.CUBE_PARAMETERS + _CF_PARAMETERS

    def guess_can_open(self, filename_or_obj: Any) -> bool:
        try:
            path = os.fspath(filename_or_obj)
        except TypeError:
            return False
        if str(path).endswith(_NETCDF_EXTENSIONS) and os.path.isfile(path):
            # NetCDF-3 only: a NetCDF-4 file (HDF5) is left to xarray's own engines.
            with io.open(path, "rb") as f:
                return f.read(3) == b"CDF"
        return str(path).endswith(_EXTENSIONS) or str(path).endswith(".index.json")

    def open_dataset(
        self,
        filename_or_obj: Any,
        *,
        drop_variables: Any = None,
        dim_names: Any = None,
        filter_by_keys: dict[str, Any] | None = None,
        read_keys: Any = (),
        time_dims: Any = ("time", "step"),
        extra_coords: dict[str, str] | None = None,
        values_dtype: Any = np.float32,
        indexpath: Any = None,
        mask_and_scale: Any = True,
        decode_times: Any = True,
        concat_characters: Any = True,
        decode_coords: Any = True,
        use_cftime: Any = None,
        decode_timedelta: Any = None,
    ) -> Dataset:
        paths = (os.fspath(filename_or_obj),)
        from ._zarr_chunked import ChunkedStore, is_chunked

        if is_chunked(paths[0]):
            # A file a Zarr store wrote (one object per chunk): read as that store.
            import xarray

            store = ChunkedStore(paths[0], mode="r")
            ds = xarray.open_dataset(store, engine="zarr", consolidated=False, drop_variables=drop_variables, chunks=None)
            ds.set_close(store.close)
            return ds
        f = _cached(paths)
        drop = set([drop_variables] if isinstance(drop_variables, str) else drop_variables or ())
        if _cubes.has_grib_keys(f):
            options = dict(filter_by_keys=filter_by_keys, read_keys=read_keys, time_dims=time_dims, extra_coords=extra_coords)
            (cube,) = _cubes.cubes(f, tree=False, **options)
            ds = _cubes.cube_dataset(paths, cube, values_dtype, drop)
            ds.set_close(None)
            return ds
        infos = {name: f.info(name) for name in f if name not in drop}
        grid_dims, grid_coords = _grids(f, infos)
        dims = _dimension_names(f, infos, dim_names, grid_dims)
        variables = {}
        global_attrs = None
        for name, info in infos.items():
            # NetCDF characters as netCDF4-python gives them (S1), for xarray to join.
            dtype = np.dtype("S1") if _netcdf.is_char(info["attributes"]) else to_numpy(info["dtype"])
            array = TensorkitBackendArray(paths, name, info["shape"], dtype)
            data = indexing.LazilyIndexedArray(array)
            attrs = _netcdf.typed_attributes(info["attributes"])
            if attrs is None:
                attrs = {k: _attribute_value(v) for k, v in info["attributes"].items() if k != "dim_names"}
            elif global_attrs is None:
                global_attrs = _netcdf.global_attributes(info["attributes"])
            variables[name] = Variable(dims[name], data, attrs=attrs)
        coords = {
            name: v
            for name, v in variables.items()
            if v.ndim == 1 and v.dims == (name,)
        }
        used = {d for v in variables.values() for d in v.dims}
        for name, (values, units) in grid_coords.items():
            if name in used and name not in variables:
                coords[name] = Variable((name,), values, attrs={"units": units})
        data_vars = {name: v for name, v in variables.items() if name not in coords}
        metadata = global_attrs if global_attrs is not None else {
            k: _attribute_value(v) for k, v in (f.metadata or {}).items() if k != "dim_names"
        }
        ds = Dataset(data_vars, coords=coords, attrs=metadata)
        if global_attrs is not None or any(_netcdf.dims(i["attributes"]) for i in infos.values()):
            # NetCDF variables, decoded by CF's conventions as xarray decodes a NetCDF file.
            import xarray

            ds = xarray.decode_cf(
                ds,
                mask_and_scale=mask_and_scale,
                decode_times=decode_times,
                concat_characters=concat_characters,
                decode_coords=decode_coords,
                use_cftime=use_cftime,
                decode_timedelta=decode_timedelta,
            )
        ds.set_close(None)
        return ds

    def open_groups_as_dict(
        self,
        filename_or_obj: Any,
        *,
        drop_variables: Any = None,
        filter_by_keys: dict[str, Any] | None = None,
        read_keys: Any = (),
        time_dims: Any = ("time", "step"),
        extra_coords: dict[str, str] | None = None,
        values_dtype: Any = np.float32,
        indexpath: Any = None,
        **kwargs: Any,
    ) -> dict[str, Dataset]:
        """Every consistent cube of a GRIB file (or one converted from GRIB) as a group named
        by its level type and what else sets it apart (``/isobaricInhPa``,
        ``/heightAboveGround_2``); each group's ``filter_by_keys`` attribute opens it alone
        with ``open_dataset``. Any other file is one group, the root."""
        paths = (os.fspath(filename_or_obj),)
        from ._zarr_chunked import ChunkedStore, is_chunked

        if is_chunked(paths[0]):
            # A file a Zarr store wrote (one object per chunk): read as that store.
            import xarray

            store = ChunkedStore(paths[0], mode="r")
            ds = xarray.open_dataset(store, engine="zarr", consolidated=False, drop_variables=drop_variables, chunks=None)
            ds.set_close(store.close)
            return ds
        f = _cached(paths)
        if not _cubes.has_grib_keys(f):
            return {"/": self.open_dataset(filename_or_obj, drop_variables=drop_variables, **kwargs)}
        drop = set([drop_variables] if isinstance(drop_variables, str) else drop_variables or ())
        groups = {"/": Dataset()}
        options = dict(filter_by_keys=filter_by_keys, read_keys=read_keys, time_dims=time_dims, extra_coords=extra_coords)
        for cube in _cubes.cubes(f, tree=True, **options):
            ds = _cubes.cube_dataset(paths, cube, values_dtype, drop)
            ds.attrs["filter_by_keys"] = json.dumps(cube["filter"])
            groups[f"/{cube['name']}"] = ds
        return groups

    def open_datatree(self, filename_or_obj: Any, **kwargs: Any) -> Any:
        from xarray import DataTree

        return DataTree.from_dict(self.open_groups_as_dict(filename_or_obj, **kwargs))
