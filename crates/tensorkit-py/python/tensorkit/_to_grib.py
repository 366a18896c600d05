"""xarray datasets to GRIB 2: :func:`to_grib` writes every field of a dataset opened by the
cube engine (or by cfgrib, whose attributes and coordinates it shares) as one GRIB 2 message,
from the ``GRIB_*`` attributes and the coordinates, through tensorkit's own writer."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from ._errors import InvalidArgumentError
from ._file import save

# The GRIB_* attributes the writer takes as they are (cfgrib's `Nx`/`Ny` are `Ni`/`Nj`).
_KEYS = {
    "paramId", "shortName", "discipline", "parameterCategory", "parameterNumber", "typeOfLevel",
    "typeOfFirstFixedSurface", "typeOfSecondFixedSurface", "stepUnits", "centre", "subCentre",
    "tablesVersion", "localTablesVersion", "typeOfProcessedData", "typeOfGeneratingProcess",
    "generatingProcessIdentifier", "gridType", "N", "pl", "uvRelativeToGrid", "shapeOfTheEarth",
    "iScansNegatively", "jScansPositively", "jPointsAreConsecutive", "iDirectionIncrementInDegrees",
    "jDirectionIncrementInDegrees", "latitudeOfFirstGridPointInDegrees", "longitudeOfFirstGridPointInDegrees",
    "latitudeOfLastGridPointInDegrees", "longitudeOfLastGridPointInDegrees", "latitudeOfSouthernPoleInDegrees",
    "longitudeOfSouthernPoleInDegrees", "angleOfRotationInDegrees", "LaDInDegrees", "LoVInDegrees",
    "Latin1InDegrees", "Latin2InDegrees", "DxInMetres", "DyInMetres", "DiInMetres", "DjInMetres",
    "orientationOfTheGridInDegrees", "projectionCentreFlag", "numberOfForecastsInEnsemble",
    "packingType", "bitsPerValue", "Ni", "Nj",
}
_RENAMED = {"Nx": "Ni", "Ny": "Nj"}
# cfgrib's stepType → code table 4.10 (statistics over the period ending at `step`, from 0).
_STATISTICS = {"accum": 1, "avg": 0, "max": 2, "min": 3}


def _grib_keys(attrs: Mapping[str, Any]) -> dict[str, Any]:
    keys: dict[str, Any] = {}
    for k, v in attrs.items():
        if not k.startswith("GRIB_"):
            continue
        name = _RENAMED.get(k[5:], k[5:])
        if name in _KEYS:
            keys[name] = v.item() if isinstance(v, np.generic) else v
    return keys


def _time_keys(coords: Mapping[str, Any], step_type: str | None) -> dict[str, Any]:
    keys: dict[str, Any] = {}
    if "time" in coords:
        t = np.datetime64(coords["time"], "m").astype(object)
        keys["dataDate"] = t.year * 10000 + t.month * 100 + t.day
        keys["dataTime"] = t.hour * 100 + t.minute
    if "step" in coords:
        hours = np.timedelta64(coords["step"], "m").astype(np.int64) / 60.0
        if hours != int(hours):
            raise InvalidArgumentError(f"a step of {hours} hours is not whole hours")
        end = int(hours)
        if step_type in (None, "instant"):
            keys["stepRange"] = str(end)
        elif step_type in _STATISTICS:
            keys["stepRange"] = f"0-{end}"
            keys["typeOfStatisticalProcessing"] = _STATISTICS[step_type]
        else:
            raise InvalidArgumentError(f"stepType {step_type!r}: give stepRange in keys=")
    return keys


def to_grib(
    ds: Any,
    path: str | os.PathLike[str],
    *,
    packing: str | None = None,
    keys: Mapping[str, Any] | None = None,
    fsync: bool = False,
) -> list[str]:
    """Writes ``ds`` — an ``xarray.Dataset`` (or ``DataArray``) opened by the cube engine or
    cfgrib — to ``path`` as GRIB 2, one message per field: each variable's ``GRIB_*``
    attributes (parameter, grid, level type) with the coordinates of the field (``time`` →
    ``dataDate``/``dataTime``, ``step`` → ``stepRange``, the level coordinate → ``level``,
    ``number`` → ``perturbationNumber``). ``keys`` are added to every field's (and win);
    ``packing`` packs the values (``"ccsds"``, ``"simple:16"``, ``"complex"``...; by default
    as the ``GRIB_packingType``/``GRIB_bitsPerValue`` attributes say, else simple packing at
    16 bits). Returns what was left out, as :func:`tensorkit.save` does.

    A field's values are written in the order the grid's keys give them: a dataset whose
    latitudes were turned round (``sortby``) is turned back first."""
    import xarray as xr

    if isinstance(ds, xr.DataArray):
        ds = ds.to_dataset(name=ds.name or "data")
    tensors: dict[str, np.ndarray] = {}
    attributes: dict[str, dict[str, Any]] = {}
    for var_name, var in ds.data_vars.items():
        base = {**_grib_keys(ds.attrs), **_grib_keys(var.attrs)}
        type_of_level = base.get("typeOfLevel")
        spatial = [d for d in var.dims if d in ("latitude", "longitude", "values", "y", "x")]
        if not spatial:
            raise InvalidArgumentError(f"{var_name}: no latitude/longitude, values or y/x dimension")
        outer = [d for d in var.dims if d not in spatial]
        var = var.transpose(*outer, *spatial)
        lat = ds["latitude"] if "latitude" in spatial else None
        first = base.get("latitudeOfFirstGridPointInDegrees")
        if lat is not None and lat.ndim == 1 and first is not None and lat.size > 1 and float(lat[-1]) == float(first) != float(lat[0]):
            var = var.isel(latitude=slice(None, None, -1))
        shape = [var.sizes[d] for d in outer]
        for index in np.ndindex(*shape):
            field = var[dict(zip(outer, index))]
            coords = {c: field.coords[c].values for c in field.coords if field.coords[c].ndim == 0}
            k = {**base, **_time_keys(coords, var.attrs.get("GRIB_stepType"))}
            if type_of_level in coords:
                level = coords[type_of_level].item()
                k["level"] = int(level) if float(level).is_integer() else float(level)
            if "number" in coords and int(coords["number"]) != 0:
                k["perturbationNumber"] = int(coords["number"])
            k.update(keys or {})
            name = f"{var_name}_{len(tensors)}"
            tensors[name] = np.ascontiguousarray(field.values)
            attributes[name] = k
    if not tensors:
        raise InvalidArgumentError("the dataset has no fields to write")
    return save(path, tensors, format="grib", pipeline=packing, attributes=attributes, fsync=fsync)
