"""Zarr v3 codecs that decode GRIB messages where they lie, for virtual Zarr stores
(``tensorkit.virtualizarr.GribParser``, kerchunk-style references, Icechunk).

``tensorkit.grib`` is an array-to-bytes codec: each chunk's bytes are one whole GRIB message,
and the codec gives what its ``configuration`` asks for —

- ``{"output": "values"}``: the field's values (float64 as ecCodes decodes them, missing
  points NaN), shaped as the chunk: what ``tensorkit.open`` gives, bit for bit;
- ``{"output": "coordinate", "name": ...}``: one of the coordinates the xarray engine gives
  the message's cube (``latitude``, ``longitude``, ``x``, ``y``, the level, ``time`` and
  ``valid_time`` as seconds since 1970, ``step`` in seconds, ``number``...);
- ``{"output": "key", "name": ...}``: one of the field's keys (``extra_coords``).

Zarr finds the codec through the ``zarr.codecs`` entry point the package installs; importing
this module registers it too. The codec only decodes: writing through it is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from zarr.abc.codec import ArrayBytesCodec
from zarr.core.buffer import Buffer, NDBuffer
from zarr.registry import register_codec

from . import _tensorkit
from ._errors import InvalidArgumentError, UnsupportedError
from ._file import open_bytes

if TYPE_CHECKING:
    from zarr.core.array_spec import ArraySpec

_OUTPUTS = ("values", "coordinate", "key")


def _coordinate(message: bytes, name: str) -> np.ndarray:
    """Coordinate ``name`` of the cube a single GRIB message makes, as numbers: instants in
    seconds since 1970, durations in seconds."""
    f = open_bytes(message)
    (cube,) = _tensorkit.grib_cubes(f._native, tree=False)
    for c in cube["coordinates"]:
        if c["name"] == name:
            return np.asarray(c["values"])
    raise InvalidArgumentError(f"the message's cube has no coordinate {name!r}")


@dataclass(frozen=True)
class GribCodec(ArrayBytesCodec):
    """One GRIB message per chunk, decoded to the chunk's values or one of its coordinates."""

    is_fixed_size = False

    output: str = "values"
    name: str | None = None
    field: int = 0

    def __init__(self, *, output: str = "values", name: str | None = None, field: int = 0) -> None:
        if output not in _OUTPUTS:
            raise InvalidArgumentError(f"tensorkit.grib: output {output!r} is not one of {_OUTPUTS}")
        if output != "values" and not name:
            raise InvalidArgumentError(f"tensorkit.grib: output {output!r} needs a name")
        object.__setattr__(self, "output", output)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "field", int(field))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GribCodec:
        return cls(**(data.get("configuration") or {}))

    def to_dict(self) -> dict[str, Any]:
        config: dict[str, Any] = {"output": self.output}
        if self.name is not None:
            config["name"] = self.name
        if self.field:
            config["field"] = self.field
        return {"name": "tensorkit.grib", "configuration": config}

    def _decode_sync(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> NDBuffer:
        message = chunk_bytes.to_bytes()
        if self.output == "values":
            f = open_bytes(message)
            names = list(f)
            if self.field >= len(names):
                raise InvalidArgumentError(f"tensorkit.grib: the message has no field {self.field}")
            values = np.asarray(f[names[self.field]])
        elif self.output == "coordinate":
            values = _coordinate(message, self.name)
        else:
            f = open_bytes(message)
            values = np.asarray(f.info(list(f)[self.field])["attributes"][self.name])
        dtype = chunk_spec.dtype.to_native_dtype()
        out = values.astype(dtype, copy=False).reshape(chunk_spec.shape)
        return chunk_spec.prototype.nd_buffer.from_ndarray_like(out)

    async def _decode_single(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> NDBuffer:
        return self._decode_sync(chunk_bytes, chunk_spec)

    async def _encode_single(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> Buffer | None:
        raise UnsupportedError("tensorkit.grib decodes GRIB messages; it does not write them")

    def compute_encoded_size(self, input_byte_length: int, chunk_spec: ArraySpec) -> int:
        raise UnsupportedError("tensorkit.grib chunks are whole GRIB messages of any size")


register_codec("tensorkit.grib", GribCodec)
