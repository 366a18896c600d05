"""earthkit-data (1.x) plugins: a source that reads every format tensorkit reads, and an
encoder that writes Tensogram.

``earthkit.data.from_source("tensorkit", path_or_url, storage_options=None)`` gives a field
list: one earthkit ``Field`` per tensor, its values read when they are asked for. A tensor's
metadata becomes the field's components as earthkit models them — ``parameter`` (MARS
``param``, else GRIB's ``shortName``, else the tensor's name; ``units``), ``time`` (``date``,
``time``, ``step``), ``vertical`` (``levtype``, ``levelist`` or ``level``), ``ensemble``
(``number``) — from a GRIB field's keys by earthkit's own GRIB builders (as when earthkit
reads the file through ecCodes), from a Tensogram object's ``mars`` map otherwise;
the whole request is kept as ``labels.mars``, and the tensor's name as ``labels.name``. A
GRIB field on a regular latitude/longitude grid, or a Tensogram object beside 1-D
``latitude`` and ``longitude`` objects in its message (as the encoder writes them), gets its
geography; any other field a geography of its shape alone.

``data.to_target("file", path, encoder="tensogram")`` (or ``earthkit.data.to_target``) writes
a field list, a field, or an xarray ``Dataset``/``DataArray`` as one Tensogram message
through tensorkit: one object per field (its values as they are, float64 stays float64), its
``base`` entry ``{"name": ..., "mars": {...}, "units": ..., "vertical": {"level": ...,
"level_type": ...}}``, so that the source reads every component back; fields that share a regular
latitude/longitude grid are preceded by ``latitude`` and ``longitude`` objects. Options:
``pipeline`` (descriptor keys, as for ``tensorkit.tensogram.encode``: ``{"compression":
"zstd"}``; none by default, so the file is the values bit for bit) and ``hash``.

Both are registered through the ``earthkit.data.sources`` and ``earthkit.data.encoders``
entry points the package installs (the encoder under ``tensogram``, the name earthkit users
write).
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Mapping
from typing import Any

import numpy as np
from earthkit.data.encoders import EncodedData, Encoder
from earthkit.data.field.handler.data import ArrayDataFieldComponentHandler
from earthkit.data.sources import Source

from . import tensogram as _tensogram
from ._file import open as _open

_LATITUDE, _LONGITUDE = "latitude", "longitude"


# -- reading ----------------------------------------------------------------------------------


class _Values(ArrayDataFieldComponentHandler):
    """A field's values, read from the file the first time they are asked for."""

    def __init__(self, read: Any) -> None:
        self._read = read
        self._held: Any = None

    @property
    def _values(self) -> Any:  # type: ignore[override]
        if self._held is None:
            self._held = self._read()
        return self._held

    def __getstate__(self) -> dict[str, Any]:
        return {"_values": self._values}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._read, self._held = None, state["_values"]


def _plain(v: Any) -> Any:
    """A metadata value as earthkit's components take it."""
    if isinstance(v, bytes):
        return v.hex()
    if isinstance(v, Mapping):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, np.generic):
        return v.item()
    return v


def _request(name: str, attributes: Mapping[str, Any]) -> dict[str, Any]:
    """A tensor's MARS request: its ``mars`` map, completed from its own keys (GRIB's
    ``shortName``, ``level``, ``number``)."""
    mars = attributes.get("mars")
    request = {str(k): _plain(v) for k, v in mars.items()} if isinstance(mars, Mapping) else {}
    short = attributes.get("shortName")
    if isinstance(short, str) and short not in ("", "unknown"):
        request["param"] = short
    request.setdefault("param", name)
    if "levelist" not in request and request.get("levtype") not in (None, "sfc") and "level" in attributes:
        request["levelist"] = _plain(attributes["level"])
    if "number" not in request and "number" in attributes:
        request["number"] = _plain(attributes["number"])
    return request


def _try(build: Any, *args: Any) -> Any:
    """A component, or ``None`` where the request does not give what it needs."""
    try:
        return build(*args)
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def _time(request: Mapping[str, Any]) -> Any:
    from earthkit.data.field.handler.time import TimeFieldComponentHandler
    from earthkit.data.utils.dates import datetime_from_grib

    date = request.get("hdate", request.get("date"))
    if date is None:
        return None
    time = request.get("time", 0)
    base = datetime_from_grib(int(str(date).replace("-", "")), int(str(time).replace(":", "")))
    step = request.get("step", 0)
    hours = float(str(step).split("-")[-1]) if step is not None else 0.0
    return TimeFieldComponentHandler.from_dict({"base_datetime": base, "step": _dt.timedelta(hours=hours)})


def _parameter(request: Mapping[str, Any], units: Any) -> Any:
    from earthkit.data.field.handler.parameter import ParameterFieldComponentHandler

    d = {"variable": str(request["param"])}
    if isinstance(units, str) and units not in ("", "unknown", "~"):
        with_units = _try(ParameterFieldComponentHandler.from_dict, {**d, "units": units})
        if with_units is not None:
            return with_units
    return ParameterFieldComponentHandler.from_dict(d)


def _vertical(request: Mapping[str, Any], vertical: Any) -> Any:
    """The vertical component: as the encoder records it (``vertical``: ``level`` and
    ``level_type`` as earthkit names them), else from the MARS ``levtype`` and ``levelist``."""
    if isinstance(vertical, Mapping) and vertical.get("level_type") is not None:
        from earthkit.data.field.handler.vertical import VerticalFieldComponentHandler

        return VerticalFieldComponentHandler.from_dict({"level": vertical.get("level"), "level_type": vertical["level_type"]})
    from earthkit.data.field.mars.vertical import MarsVerticalBuilder

    return None if request.get("levtype") is None else MarsVerticalBuilder.build(dict(request))


def _ensemble(request: Mapping[str, Any]) -> Any:
    from earthkit.data.field.mars.ensemble import MarsEnsembleBuilder

    return MarsEnsembleBuilder.build(dict(request))


def _geography(shape: tuple[int, ...], axes: tuple[np.ndarray, np.ndarray] | None) -> Any:
    from earthkit.data.field.handler.geography import GeographyFieldComponentHandler

    if axes is not None:
        lats, lons = axes
        return GeographyFieldComponentHandler.from_dict({"latitudes": lats, "longitudes": lons}, shape_hint=shape)
    return GeographyFieldComponentHandler.from_dict({}, shape_hint=shape)


_STEP_UNITS = {0: 60, 1: 3600, 2: 86400, 10: 3 * 3600, 11: 6 * 3600, 12: 12 * 3600, 13: 1}


class _GribKeys:
    """A GRIB field's keys as tensorkit reads them, asked as earthkit asks an ecCodes handle
    (so that earthkit's own GRIB builders make its components, as for a file it reads)."""

    def __init__(self, attributes: Mapping[str, Any]) -> None:
        self._a = attributes

    def get(self, key: str, default: Any = None, ktype: Any = None) -> Any:
        a = self._a
        if key == "name":  # ecCodes' parameter name; tensorkit's `name` is the tensor's
            v = a.get("parameterName", default)
        elif key in ("endStep", "step"):
            v = self._step(default)
        else:
            v = a.get(key, default)
        return ktype(v) if ktype is not None and v is not None else v

    def is_defined(self, key: str) -> bool:
        return key in self._a

    def _step(self, default: Any) -> Any:
        step = self._a.get("stepRange")
        seconds = _STEP_UNITS.get(self._a.get("stepUnits", 1))
        if step is None or seconds is None:
            return default
        try:
            return _dt.timedelta(seconds=float(str(step).split("-")[-1]) * seconds)
        except ValueError:
            return default


def _grib_components(attributes: Mapping[str, Any]) -> dict[str, Any]:
    from earthkit.data.field.grib.ensemble import GribEnsembleBuilder
    from earthkit.data.field.grib.parameter import GribParameterBuilder
    from earthkit.data.field.grib.time import GribTimeBuilder
    from earthkit.data.field.grib.vertical import GribVerticalBuilder

    keys = _GribKeys(attributes)
    return {
        "parameter": _try(GribParameterBuilder.build, keys),
        "time": _try(GribTimeBuilder.build, keys),
        "vertical": _try(GribVerticalBuilder.build, keys),
        "ensemble": _try(GribEnsembleBuilder.build, keys),
    }


def _field(read: Any, name: str, attributes: Mapping[str, Any], shape: tuple[int, ...], axes: Any) -> Any:
    """A field of values ``read()`` gives, described by ``attributes``."""
    from earthkit.data.core.field import Field
    from earthkit.data.field.handler.labels import SimpleLabels

    request = _request(name, attributes)
    if "typeOfLevel" in attributes and "dataDate" in attributes:
        components = _grib_components(attributes)
    else:
        components = {
            "parameter": _try(_parameter, request, attributes.get("units")),
            "time": _try(_time, request),
            "vertical": _try(_vertical, request, attributes.get("vertical")),
            "ensemble": _try(_ensemble, request),
        }
    return Field(
        data=_Values(read),
        geography=_geography(shape, axes),
        labels=SimpleLabels({"mars": request, "name": name}),
        **components,
    )


def _tensogram_fields(path: str, storage_options: Mapping[str, str] | None) -> list[Any]:
    """A Tensogram file's objects, message by message: 1-D ``latitude`` and ``longitude``
    objects are the geography of the message's fields of their shape."""
    if storage_options:
        f = _tensogram.TensogramFile.open_remote(path, dict(storage_options))
    else:
        f = _tensogram.TensogramFile.open(path)
    fields = []
    for m in range(f.message_count()):
        described = f.file_decode_descriptors(m)
        base = described["metadata"].base
        shapes = [tuple(d.shape) for d in described["descriptors"]]
        named = {b.get("name"): j for j, b in enumerate(base) if len(shapes[j]) == 1}
        axes = None
        if _LATITUDE in named and _LONGITUDE in named:
            axes = tuple(np.asarray(f.file_decode_object(m, named[k])["data"]) for k in (_LATITUDE, _LONGITUDE))
        for j, (entry, shape) in enumerate(zip(base, shapes)):
            if axes is not None and j in (named[_LATITUDE], named[_LONGITUDE]):
                continue
            attributes = {k: v for k, v in entry.items() if k != "_reserved_"}
            name = str(attributes.get("name", f"message{m}_object{j}"))
            fits = axes is not None and shape == (len(axes[0]), len(axes[1]))
            fields.append(_field(lambda m=m, j=j: np.asarray(f.file_decode_object(m, j)["data"]), name, attributes, shape, axes if fits else None))
    return fields


def _front_door_fields(path: str, storage_options: Mapping[str, str] | None) -> list[Any]:
    """Any other format's tensors, through ``tensorkit.open``: a GRIB field on a regular
    latitude/longitude grid with its axes."""
    f = _open(path, storage_options=dict(storage_options) if storage_options else None)
    if f.format == "tensogram":
        return _tensogram_fields(path, storage_options)
    fields = []
    for name in f:
        info = f.info(name)
        grid = f._native.grid_axes(name)
        axes = None if grid is None else (np.asarray(grid[0][2]), np.asarray(grid[1][2]))
        fields.append(_field(lambda name=name: np.asarray(f[name]), name, info["attributes"], tuple(info["shape"]), axes))
    return fields


def fieldlist(path: str | os.PathLike[str], storage_options: Mapping[str, str] | None = None) -> Any:
    """The fields of the file at ``path`` (local, or a URL), as an earthkit field list."""
    from earthkit.data.indexing.simple import SimpleFieldList

    return SimpleFieldList(_front_door_fields(os.fspath(path), storage_options))


class TensorkitSource(Source):
    """``earthkit.data.from_source("tensorkit", path_or_url, storage_options=None)``."""

    def __init__(self, path: str | os.PathLike[str], *, storage_options: Mapping[str, str] | None = None) -> None:
        super().__init__()
        self.path = os.fspath(path)
        self.storage_options = storage_options

    def mutate(self) -> Any:
        return fieldlist(self.path, self.storage_options)

    def to_data_object(self) -> Any:
        from earthkit.data.data.fieldlist import FieldListData

        return FieldListData(self.mutate())

    def __repr__(self) -> str:
        return f"TensorkitSource({self.path!r})"


source = TensorkitSource


# -- writing ----------------------------------------------------------------------------------


class TensogramEncodedData(EncodedData):
    """One Tensogram message, for earthkit's targets."""

    prefer_file_path = False

    def __init__(self, message: bytes, metadata: Mapping[str, Any] | None = None) -> None:
        self._message = message
        self._metadata = dict(metadata or {})

    def to_bytes(self) -> bytes:
        return self._message

    def to_file(self, file: Any) -> None:
        if isinstance(file, (str, os.PathLike)):
            with open(file, "wb") as out:
                out.write(self._message)
        else:
            file.write(self._message)

    def get(self, key: Any = None, default: Any = None) -> Any:
        return dict(self._metadata) if key is None else self._metadata.get(key, default)


def _descriptor(values: np.ndarray, pipeline: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "ntensor", "shape": list(values.shape), "dtype": str(values.dtype), **pipeline}


# earthkit's level types that MARS has a ``levtype`` for.
_LEVTYPES = {
    "surface": "sfc",
    "height_above_ground_level": "sfc",
    "mean_sea": "sfc",
    "pressure": "pl",
    "hybrid": "ml",
    "pv": "pv",
    "theta": "pt",
}


def _field_entry(field: Any) -> dict[str, Any]:
    """A field's ``base`` entry: its MARS request (its ``labels.mars``, else one made from its
    components), name and units."""
    def get(key: str) -> Any:
        try:
            return field.get(key)
        except Exception:
            return None

    mars = get("labels.mars")
    request = {str(k): _plain(v) for k, v in mars.items()} if isinstance(mars, Mapping) else {}
    if not request:
        variable = get("parameter.variable")
        if variable is not None:
            request["param"] = variable
        base = get("time.base_datetime")
        if isinstance(base, _dt.datetime):
            request["date"] = int(base.strftime("%Y%m%d"))
            request["time"] = int(base.strftime("%H%M"))
        step = get("time.step")
        if isinstance(step, _dt.timedelta):
            hours = step.total_seconds() / 3600
            request["step"] = int(hours) if hours.is_integer() else hours
        levtype = _LEVTYPES.get(str(get("vertical.level_type")))
        if levtype is not None:
            request["levtype"] = levtype
        level = get("vertical.level")
        if level is not None and levtype not in (None, "sfc"):
            request["levelist"] = _plain(level)
        number = get("ensemble.member")
        if number is not None:
            request["number"] = _plain(number)
    entry: dict[str, Any] = {"mars": request}
    name = get("labels.name") or request.get("param")
    if name is not None:
        entry["name"] = str(name)
    units = get("parameter.units")
    if units is not None:
        entry["units"] = str(units)
    level_type = get("vertical.level_type")
    if level_type is not None and str(level_type) != "unknown":
        entry["vertical"] = {"level": _plain(get("vertical.level")), "level_type": str(level_type)}
    return entry


def _regular_axes(field: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """A field's latitudes and longitudes when it lies on a regular grid (1-D axes)."""
    try:
        lats = np.asarray(field.geography.latitudes())
        lons = np.asarray(field.geography.longitudes())
    except Exception:
        return None
    shape = tuple(field.shape)
    if len(shape) != 2 or lats.shape != shape or lons.shape != shape:
        return None
    lat, lon = lats[:, 0], lons[0, :]
    if np.array_equal(lats, np.broadcast_to(lat[:, None], shape)) and np.array_equal(lons, np.broadcast_to(lon[None, :], shape)):
        return lat, lon
    return None


class TensogramEncoder(Encoder):
    """``to_target(..., encoder="tensogram")``: Tensogram through tensorkit."""

    def __init__(self, pipeline: Mapping[str, Any] | None = None, hash: str | None = "xxh3", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._pipeline = dict(pipeline or {})
        self._hash = hash

    def encode(self, data: Any = None, target: Any = None, **kwargs: Any) -> EncodedData:
        if data is None:
            raise ValueError("the tensogram encoder needs data to encode")
        import xarray as xr

        if isinstance(data, (xr.Dataset, xr.DataArray)):
            return self._encode_xarray(data, **kwargs)
        if hasattr(data, "to_fieldlist") and not hasattr(data, "__len__"):
            data = data.to_fieldlist()
        if hasattr(data, "_encode"):
            return data._encode(self, target=target, **kwargs)
        return self._encode_fieldlist(data, **kwargs)

    def _encode(self, data: Any, *, target: Any = None, **kwargs: Any) -> EncodedData:
        if hasattr(data, "__len__") and hasattr(data, "__iter__"):
            return self._encode_fieldlist(data, **kwargs)
        return self._encode_field(data, **kwargs)

    def _encode_field(self, field: Any, **kwargs: Any) -> EncodedData:
        return self._encode_fieldlist([field], **kwargs)

    def _options(self, kwargs: Mapping[str, Any]) -> tuple[dict[str, Any], Any]:
        pipeline = dict(kwargs.get("pipeline") or self._pipeline)
        return pipeline, kwargs.get("hash", self._hash)

    def _encode_fieldlist(self, fields: Any, **kwargs: Any) -> EncodedData:
        pipeline, hash_ = self._options(kwargs)
        fields = list(fields)
        grids = [_regular_axes(f) for f in fields]
        shared = grids[0] if grids and all(g is not None for g in grids) and all(
            np.array_equal(g[0], grids[0][0]) and np.array_equal(g[1], grids[0][1]) for g in grids
        ) else None
        base: list[dict[str, Any]] = []
        objects: list[tuple[dict[str, Any], np.ndarray]] = []
        if shared is not None:
            for axis, values, units in ((_LATITUDE, shared[0], "degrees_north"), (_LONGITUDE, shared[1], "degrees_east")):
                a = np.ascontiguousarray(values, dtype=np.float64)
                base.append({"name": axis, "units": units})
                objects.append((_descriptor(a, {}), a))
        for f in fields:
            values = np.ascontiguousarray(f.to_numpy())
            base.append(_field_entry(f))
            objects.append((_descriptor(values, pipeline), values))
        message = _tensogram.encode({"base": base}, objects, hash=hash_, allow_nan=True, allow_inf=True)
        return TensogramEncodedData(bytes(message), {"fields": len(fields)})

    def _encode_xarray(self, data: Any, **kwargs: Any) -> EncodedData:
        import xarray as xr

        pipeline, hash_ = self._options(kwargs)
        ds = data.to_dataset(name=data.name or "data") if isinstance(data, xr.DataArray) else data
        base: list[dict[str, Any]] = []
        objects: list[tuple[dict[str, Any], np.ndarray]] = []
        for name, var in {**dict(ds.coords), **dict(ds.data_vars)}.items():
            values = np.ascontiguousarray(var.values)
            if values.dtype.kind not in "fiucb":
                values = values.astype("datetime64[s]").astype(np.int64) if values.dtype.kind == "M" else values
                if values.dtype.kind not in "fiucb":
                    raise ValueError(f"variable {name!r}: dtype {var.dtype} has no Tensogram dtype")
            entry = {"name": str(name), "dim_names": [str(d) for d in var.dims], **{str(k): _plain(v) for k, v in var.attrs.items()}}
            base.append(entry)
            objects.append((_descriptor(values, pipeline if name in ds.data_vars else {}), values))
        extra = {str(k): _plain(v) for k, v in ds.attrs.items()}
        message = _tensogram.encode({"base": base, **extra}, objects, hash=hash_, allow_nan=True, allow_inf=True)
        return TensogramEncodedData(bytes(message), {"variables": len(ds.data_vars)})

    def _encode_featurelist(self, *args: Any, **kwargs: Any) -> EncodedData:
        raise ValueError("the tensogram encoder writes fields and xarray data, not features")

    def _encode_path(self, *args: Any, **kwargs: Any) -> EncodedData:
        raise ValueError("the tensogram encoder writes fields and xarray data, not paths")


encoder = TensogramEncoder
