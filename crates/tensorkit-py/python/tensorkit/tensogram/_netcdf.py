"""NetCDF to and from Tensogram messages under tensogram's names — ``convert_netcdf`` and
``to_netcdf`` — without libnetcdf: tensorkit reads and writes NetCDF-3 and NetCDF-4 itself."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._errors import InvalidArgumentError
from .._file import convert
from ._codec import decode, encode, scan

# The attributes ``cf=True`` lifts into each object's ``base`` entry under ``cf``, as
# tensogram's importer lists them.
CF_ATTRIBUTES = (
    "standard_name", "long_name", "units", "calendar", "cell_methods", "coordinates", "axis",
    "positive", "valid_min", "valid_max", "valid_range", "bounds", "grid_mapping",
    "ancillary_variables", "flag_values", "flag_meanings",
)

_COMPRESSIONS = ("none", "zstd", "lz4", "blosc2", "szip")


def _stages(dtype: str, encoding: str, bits: int | None, filter: str, compression: str,
            level: int | None) -> dict[str, Any]:
    """The descriptor keys of the pipeline asked for, for an object of ``dtype``: simple
    packing for float64 alone (the others pass unencoded, as tensogram's importer does)."""
    out: dict[str, Any] = {}
    try:
        width = np.dtype(dtype).itemsize
    except TypeError:  # bitmask
        width = 1
    if encoding == "simple_packing" and dtype == "float64":
        out.update(encoding="simple_packing", sp_bits_per_value=16 if bits is None else bits)
        width = (out["sp_bits_per_value"] + 7) // 8
    if filter == "shuffle":
        out.update(filter="shuffle", shuffle_element_size=width)
    if compression == "zstd":
        out.update(compression="zstd", zstd_level=3 if level is None else level)
    elif compression == "lz4":
        out.update(compression="lz4")
    elif compression == "blosc2":
        out.update(compression="blosc2", blosc2_codec="lz4", blosc2_clevel=5 if level is None else level)
    elif compression == "szip":
        out.update(compression="szip", szip_rsi=128, szip_block_size=16, szip_flags=8)
    return out


def convert_netcdf(
    path: str | os.PathLike[str],
    *,
    split_by: str = "file",
    cf: bool = False,
    encoding: str = "none",
    bits: int | None = None,
    filter: str = "none",
    compression: str = "none",
    compression_level: int | None = None,
    threads: int = 0,
    hash: str | None = "xxh3",
) -> list[bytes]:
    """A NetCDF-3 or NetCDF-4 file as Tensogram messages, as tensogram's ``convert_netcdf``
    makes them: one message (``split_by="file"``), one per variable (``"variable"``) or one
    per record of the unlimited dimension (``"record"``); packed variables unpacked to
    float64 (fill and missing values NaN, kept in masks); ``char`` variables left out; each
    object's ``base`` entry carrying its ``name`` and ``netcdf`` structure, and its CF
    attributes under ``cf`` with ``cf=True``. ``encoding``, ``bits``, ``filter``,
    ``compression`` and ``compression_level`` choose the stages (simple packing applies to
    float64 variables); ``hash`` is ``"xxh3"`` or ``None``; ``threads`` is accepted for
    tensogram's signature."""
    del threads
    source = os.fspath(path)
    if split_by not in ("file", "variable", "record"):
        raise InvalidArgumentError(f"split_by={split_by!r}: one of 'file', 'variable', 'record'")
    if hash not in ("xxh3", None):
        raise InvalidArgumentError(f"hash={hash!r}: 'xxh3' or None")
    if encoding not in ("none", "simple_packing"):
        raise InvalidArgumentError(f"encoding={encoding!r}: 'none' or 'simple_packing'")
    if filter not in ("none", "shuffle"):
        raise InvalidArgumentError(f"filter={filter!r}: 'none' or 'shuffle'")
    if compression not in _COMPRESSIONS:
        raise InvalidArgumentError(f"compression={compression!r}: one of {', '.join(_COMPRESSIONS)}")
    if bits is not None and not 1 <= bits <= 64:
        raise InvalidArgumentError(f"bits={bits}: 1 to 64")
    # The arguments first, then the file, as tensogram checks them.
    if not os.path.exists(source):
        raise FileNotFoundError(f"no such file: {source}")
    with tempfile.TemporaryDirectory() as tmp:
        tgm = os.path.join(tmp, "converted.tgm")
        convert(source, tgm, unpack=True, split_by=split_by, canonical_nan=True)
        with open(tgm, "rb") as f:
            buf = f.read()
    messages = []
    for offset, length in scan(buf):
        meta, objects = decode(buf[offset : offset + length], restore_non_finite=True)
        kept = [
            (base, d, a)
            for base, (d, a) in zip(meta.base, objects)
            if (base.get("netcdf") or {}).get("_nc_type") != "char"
        ]
        if not kept:
            continue
        bases = []
        pairs = []
        for entry, d, a in kept:
            # tensogram's layout: the variable's attributes inside its `netcdf` map, with the
            # structure (`_dims`, `_file`...); what the library writes itself (`_reserved_`)
            # is written anew.
            attributes = {k: v for k, v in entry.items() if k not in ("name", "netcdf", "_reserved_")}
            base: dict[str, Any] = {"name": entry.get("name"), "netcdf": {**attributes, **(entry.get("netcdf") or {})}}
            if cf:
                lifted = {k: attributes[k] for k in CF_ATTRIBUTES if k in attributes}
                if lifted:
                    base["cf"] = lifted
            bases.append(base)
            desc = {"type": "ntensor", "shape": list(d.shape), "dtype": d.dtype,
                    **_stages(d.dtype, encoding, bits, filter, compression, compression_level)}
            pairs.append((desc, np.ascontiguousarray(a)))
        messages.append(encode({**dict(meta.extra), "base": bases}, pairs, hash=hash, allow_nan=True, allow_inf=True))
    if not messages:
        raise InvalidArgumentError(f"{source}: no numeric variable to convert")
    return messages


def to_netcdf(messages: Sequence[Any], path: str | os.PathLike[str]) -> None:
    """Writes every variable of ``messages`` (Tensogram messages, ``bytes``: one from a
    ``split_by="file"`` conversion, one per variable from ``split_by="variable"``) into the
    NetCDF-4 file at ``path``, with the dimensions, attributes (their types too) and global
    attributes their ``netcdf`` entries carry. The file appears whole or not at all; no
    messages, dimensions the messages disagree on, or a variable in two messages raise
    ``ValueError``."""
    if not messages:
        raise InvalidArgumentError("to_netcdf: no messages to write")
    target = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(target))
    # The messages one after another are a Tensogram file; converted from a sibling temporary
    # file, written atomically.
    fd, joined = tempfile.mkstemp(prefix=".to_netcdf.", suffix=".tgm", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            for m in messages:
                f.write(memoryview(m).cast("B"))
        convert(joined, target, format="netcdf", pipeline="netcdf4")
    finally:
        os.unlink(joined)
