"""GRIB to and from Tensogram messages under tensogram's names — ``convert_grib``,
``convert_grib_buffer`` and ``to_grib`` — without ecCodes: tensorkit reads and writes GRIB
itself. Each field is one float64 object whose ``base`` entry carries its MARS keys under
``mars`` (with ``grid`` and, for a regular latitude-longitude grid, ``area`` as
``[N, W, S, E]``), the keys to write it again under ``grib_repro``, and with
``preserve_all_keys`` its keys by ecCodes namespace under ``grib``."""

from __future__ import annotations

import os
import tempfile
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._errors import InvalidArgumentError
from .._file import convert
from ._codec import decode, encode, scan
from ._netcdf import _COMPRESSIONS, _stages

_GROUPINGS = ("merge_all", "one_to_one")

# The keys each ecCodes namespace lists that tensorkit's reader gives a field (under their
# ecCodes names; ecCodes' `name` is `parameterName` in a field's attributes, `name` being
# what a tensor is called by).
_NAMESPACES = {
    "ls": ("edition", "centre", "paramId", "shortName", "typeOfLevel", "level", "dataDate",
           "dataTime", "stepRange", "dataType", "number", "gridType"),
    "geography": ("gridType", "Ni", "Nj", "N", "pl", "latitudeOfFirstGridPointInDegrees",
                  "longitudeOfFirstGridPointInDegrees", "latitudeOfLastGridPointInDegrees",
                  "longitudeOfLastGridPointInDegrees", "iDirectionIncrementInDegrees",
                  "jDirectionIncrementInDegrees", "iScansNegatively", "jScansPositively",
                  "jPointsAreConsecutive"),
    "time": ("dataDate", "dataTime", "stepUnits", "stepRange"),
    "vertical": ("typeOfLevel", "level", "NV"),
    "parameter": ("centre", "paramId", "shortName", "units", "parameterName"),
}


def _area(keys: dict[str, Any]) -> list[float] | None:
    """A regular latitude-longitude grid's ``[N, W, S, E]``, as tensogram computes it: north
    to south and west to east scans only; a global grid whose first longitude is past its
    last (dateline first) has its west moved by -360."""
    try:
        north = float(keys["latitudeOfFirstGridPointInDegrees"])
        west = float(keys["longitudeOfFirstGridPointInDegrees"])
        south = float(keys["latitudeOfLastGridPointInDegrees"])
        east = float(keys["longitudeOfLastGridPointInDegrees"])
        ni = int(keys["Ni"])
        step = float(keys["iDirectionIncrementInDegrees"])
    except (KeyError, TypeError, ValueError):
        return None
    if int(keys.get("iScansNegatively", -1)) != 0 or int(keys.get("jScansPositively", -1)) != 0:
        return None
    if not all(np.isfinite([north, west, south, east, step])) or ni < 2 or step <= 0:
        return None
    if west > east:
        if abs(ni * step - 360.0) >= 0.5 * step:
            return None
        if abs((east - (west - 360.0)) - (ni - 1) * step) >= 0.5 * step:
            return None
        west -= 360.0
    if north <= south or west >= east:
        return None
    return [north, west, south, east]


def _statistics(values: np.ndarray) -> dict[str, Any]:
    """ecCodes' ``statistics`` namespace of a field's values (missing points left out)."""
    v = values[np.isfinite(values)]
    if v.size == 0:
        return {}
    return {
        "max": float(v.max()),
        "min": float(v.min()),
        "average": float(v.mean()),
        "standardDeviation": float(v.std()),
        "isConstant": int(v.max() == v.min()),
    }


def _messages_in(buf: bytes) -> bytes:
    """The GRIB messages of ``buf`` one after another, as ecCodes finds them: bytes before a
    message, between messages and after the last are skipped (a ``GRIB`` whose length runs
    past the buffer, or whose ``7777`` is not where its length says, is not a message)."""
    out = bytearray()
    at = 0
    while True:
        start = buf.find(b"GRIB", at)
        if start < 0 or start + 16 > len(buf):
            break
        edition = buf[start + 7]
        if edition == 2:
            length = int.from_bytes(buf[start + 8 : start + 16], "big")
        elif edition == 1:
            length = int.from_bytes(buf[start + 4 : start + 7], "big")
        else:
            length = 0
        end = start + length
        if length >= 16 and end <= len(buf) and buf[end - 4 : end] == b"7777":
            out += buf[start:end]
            at = end
        else:
            at = start + 4
    return bytes(out)


def _check(grouping: str, encoding: str, bits: int | None, filter: str, compression: str,
           hash: str | None) -> None:
    if grouping not in _GROUPINGS:
        raise InvalidArgumentError(f"unknown grouping {grouping!r}: expected one of {', '.join(_GROUPINGS)}")
    if encoding not in ("none", "simple_packing"):
        raise InvalidArgumentError(f"unknown encoding {encoding!r}: expected 'none' or 'simple_packing'")
    if filter not in ("none", "shuffle"):
        raise InvalidArgumentError(f"unknown filter {filter!r}: expected 'none' or 'shuffle'")
    if compression not in _COMPRESSIONS:
        raise InvalidArgumentError(
            f"unknown compression {compression!r}: expected one of {', '.join(_COMPRESSIONS)}")
    if bits is not None and bits > 64:
        raise InvalidArgumentError(f"bits_per_value {bits} exceeds maximum of 64")
    if bits is not None and bits < 1:
        raise InvalidArgumentError(f"bits_per_value {bits}: at least 1")
    if hash not in ("xxh3", None):
        raise InvalidArgumentError(f"hash={hash!r}: 'xxh3' or None")


def _convert(grib: bytes, grouping: str, preserve_all_keys: bool, encoding: str,
             bits: int | None, filter: str, compression: str, compression_level: int | None,
             hash: str | None) -> list[bytes]:
    fields = _messages_in(grib)
    if not fields:
        raise InvalidArgumentError("no GRIB message found")
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "fields.grib")
        with open(src, "wb") as f:
            f.write(fields)
        tgm = os.path.join(tmp, "fields.tgm")
        convert(src, tgm, pipeline="none")
        with open(tgm, "rb") as f:
            buf = f.read()
    objects: list[tuple[dict[str, Any], np.ndarray]] = []
    for offset, length in scan(buf):
        meta, decoded = decode(buf[offset : offset + length], restore_non_finite=True)
        for entry, (_d, values) in zip(meta.base, decoded):
            keys = {k: v for k, v in entry.items() if k not in ("name", "_reserved_")}
            mars = dict(keys.get("mars") or {})
            if "gridType" in keys:
                mars["grid"] = keys["gridType"]
                area = _area(keys) if keys["gridType"] == "regular_ll" else None
                if area is not None:
                    mars["area"] = area
            base: dict[str, Any] = {"mars": mars}
            if preserve_all_keys:
                namespaces = {
                    ns: {("name" if k == "parameterName" else k): keys[k] for k in names if k in keys}
                    for ns, names in _NAMESPACES.items()
                }
                namespaces["statistics"] = _statistics(np.asarray(values, dtype=np.float64))
                base["grib"] = {ns: v for ns, v in namespaces.items() if v}
            base["grib_repro"] = keys
            objects.append((base, np.ascontiguousarray(values, dtype=np.float64)))
    groups = [objects] if grouping == "merge_all" else [[o] for o in objects]
    messages = []
    for group in groups:
        pairs = []
        for _base, values in group:
            desc = {"type": "ntensor", "shape": list(values.shape), "dtype": "float64",
                    **_stages("float64", encoding, bits, filter, compression, compression_level)}
            pairs.append((desc, values))
        messages.append(encode({"base": [b for b, _ in group]}, pairs, hash=hash,
                               allow_nan=True, allow_inf=True))
    return messages


def convert_grib(
    path: str | os.PathLike[str],
    *,
    grouping: str = "merge_all",
    preserve_all_keys: bool = False,
    encoding: str = "none",
    bits: int | None = None,
    filter: str = "none",
    compression: str = "none",
    compression_level: int | None = None,
    threads: int = 0,
    hash: str | None = "xxh3",
) -> list[bytes]:
    """The GRIB file at ``path`` (editions 1 and 2) as Tensogram messages, as tensogram's
    ``convert_grib`` makes them: every field in one message (``grouping="merge_all"``) or one
    message a field (``"one_to_one"``), each field one float64 object (its grid's shape,
    missing points NaN in masks) whose ``base`` entry holds its MARS keys under ``mars``,
    the keys it is written again with under ``grib_repro`` and, with ``preserve_all_keys``,
    its keys by ecCodes namespace (``ls``, ``geography``, ``time``, ``vertical``,
    ``parameter``, ``statistics``) under ``grib``. ``encoding``, ``bits`` (16 by default
    for simple packing), ``filter``, ``compression`` and ``compression_level`` choose the
    stages; bytes around and between messages are skipped; ``threads`` is accepted for
    tensogram's signature."""
    del threads
    _check(grouping, encoding, bits, filter, compression, hash)
    source = os.fspath(path)
    if not os.path.exists(source):
        raise FileNotFoundError(f"no such file: {source}")
    with open(source, "rb") as f:
        grib = f.read()
    return _convert(grib, grouping, preserve_all_keys, encoding, bits, filter, compression,
                    compression_level, hash)


def convert_grib_buffer(
    buf: Any,
    *,
    grouping: str = "merge_all",
    preserve_all_keys: bool = False,
    encoding: str = "none",
    bits: int | None = None,
    filter: str = "none",
    compression: str = "none",
    compression_level: int | None = None,
    threads: int = 0,
    hash: str | None = "xxh3",
) -> list[bytes]:
    """:func:`convert_grib` of GRIB bytes in memory (``bytes``, ``bytearray``,
    ``memoryview`` or any buffer)."""
    del threads
    _check(grouping, encoding, bits, filter, compression, hash)
    return _convert(bytes(memoryview(buf).cast("B")), grouping, preserve_all_keys, encoding,
                    bits, filter, compression, compression_level, hash)


def to_grib(messages: Sequence[Any]) -> bytes:
    """GRIB 2 again from Tensogram messages :func:`convert_grib` made (or tensogram's, whose
    ``grib_repro`` keys name the grid, product and packing): every object written as the
    field its ``grib_repro`` keys describe, in order (a field read from GRIB comes back byte
    for byte when its values are unchanged; one packed as tensorkit cannot write — JPEG 2000
    — as simple packing with the same parameters, with a warning). A message that does not
    decode, or an object without ``grib_repro``, raises ``ValueError``."""
    bases: list[dict[str, Any]] = []
    pairs: list[tuple[dict[str, Any], np.ndarray]] = []
    for k, m in enumerate(messages):
        try:
            meta, objects = decode(bytes(memoryview(m).cast("B")), restore_non_finite=True)
        except ValueError as e:
            raise InvalidArgumentError(f"message {k}: cannot decode it as Tensogram: {e}") from e
        for i, (entry, (_d, values)) in enumerate(zip(meta.base, objects)):
            repro = entry.get("grib_repro")
            if not isinstance(repro, dict):
                raise InvalidArgumentError(
                    f"message {k}, object {i}: no grib_repro keys to write a GRIB field from "
                    "(decode a message convert_grib made)")
            values = np.ascontiguousarray(values, dtype=np.float64)
            # A field's keys as tensorkit's GRIB writer reads them: the object's base entry.
            bases.append({**repro, "name": f"field_{len(bases)}"})
            pairs.append(({"type": "ntensor", "shape": list(values.shape), "dtype": "float64"}, values))
    if not pairs:
        raise InvalidArgumentError("to_grib: no messages to write")
    with tempfile.TemporaryDirectory() as tmp:
        tgm = os.path.join(tmp, "fields.tgm")
        with open(tgm, "wb") as f:
            f.write(encode({"base": bases}, pairs, allow_nan=True, allow_inf=True))
        out = os.path.join(tmp, "fields.grib2")
        # What is written otherwise than it was read (a JPEG 2000 field as simple packing with
        # the same parameters) is said in a warning.
        for note in convert(tgm, out, format="grib2"):
            warnings.warn(f"to_grib: {note}", stacklevel=2)
        with open(out, "rb") as f:
            return f.read()
