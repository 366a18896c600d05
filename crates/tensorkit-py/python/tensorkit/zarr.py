"""Zarr v3 for tensorkit: a read-only store over Tensogram files (``Store``), and the codec
that decodes GRIB messages where they lie, for virtual Zarr stores
(``tensorkit.virtualizarr.GribParser``, Icechunk).

``Store(path_or_url, read_only=True, storage_options=None)`` shows a ``.tgm`` file — a local
one, several local ones as one, or one at an ``https://``, ``s3://``, ``gs://`` or ``az://``
URL read through range requests (``storage_options`` as ``tensorkit.open`` takes them) — as a
Zarr v3 group: every data object of every message is an array named as ``tensorkit.open``
names it, its attributes the object's metadata, the file metadata the group's attributes.
Nothing is decoded when the store opens; an array's one chunk is decoded (little-endian,
C order) when it is read, and range, offset and suffix requests are served from it. Dtypes
Zarr has no data type for (bfloat16, the 4- and 8-bit floats) are left out, and named in
the group's ``tensorkit_left_out`` attribute. The store pickles as its paths (and storage
options) and compares equal to another over the same files. Writing to it is refused: "store was opened in
read-only mode and does not support writing".

``Store(path, mode="w" | "a", pipeline=..., pipelines=..., hash=...)`` is a ``ChunkedStore``
instead (module ``tensorkit._zarr_chunked``): ``xarray.Dataset.to_zarr(store)`` and
``zarr.create_array(store, ...)`` write a Tensogram file through it, one data object per
chunk, each chunk written to disk as it comes (memory holds one at a time; copies of the
store on dask workers write side by side), and the file itself written whole and renamed
into place at ``store.close()``. ``Store(path)`` on a file a ``ChunkedStore`` wrote reads it
the same way: arrays of many chunks, their codecs, attributes and every key as written.

Two codecs decode chunks where they lie in their files, for virtual Zarr stores
(``tensorkit.virtualizarr``, kerchunk JSON, Icechunk). Both are bytes-to-bytes codecs: they
turn a chunk's bytes into the little-endian bytes of its values, which Zarr's ``bytes``
codec then reads — so that a virtual store written as kerchunk JSON (Zarr v2, where they
are filters) reads the same values as one in Zarr v3. ``tensorkit.tensogram`` decodes one
Tensogram data object per chunk (``tensorkit.virtualizarr.TensogramParser``), as its
``configuration`` says:

- ``{"descriptor": {...}}``: the chunk is the object's payload, the descriptor tensogram's;
- ``{"output": "values"}``: the chunk is the object's whole data frame, which carries its own
  descriptor and masks (NaN and ±Inf restored, the frame's hash verified);
- ``{"output": "coordinate", "name": ..., "cube": {...}}``: the chunk is a metadata frame,
  and the values one coordinate of the cube that ``cube``'s options (the xarray engine's
  ``filter_by_keys``, ``read_keys``, ``time_dims``, ``extra_coords``) pick from the objects
  it describes, as ``tensorkit.grib`` gives them below;

with ``dtype`` for the last two, as below. ``tensorkit.grib`` decodes one whole GRIB
message per chunk, giving what its ``configuration`` asks for —

- ``{"output": "values"}``: the field's values (float64 as ecCodes decodes them, missing
  points NaN), shaped as the chunk: what ``tensorkit.open`` gives, bit for bit;
- ``{"output": "coordinate", "name": ...}``: one of the coordinates the xarray engine gives
  the message's cube (``latitude``, ``longitude``, ``x``, ``y``, the level, ``time`` and
  ``valid_time`` as seconds since 1970, ``step`` in seconds, ``number``...);
- ``{"output": "key", "name": ...}``: one of the field's keys (``extra_coords``);

and ``dtype``, the values' dtype (what a Zarr v2 filter, which is not told the array's,
gives).

Zarr finds the codecs through the ``zarr.codecs`` entry points the package installs, and
numcodecs (Zarr v2's filters) through its ``numcodecs.codecs`` ones; importing this module
registers them too. They only decode: writing through them is refused.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numcodecs
import numcodecs.abc
import numcodecs.compat
from zarr.abc.codec import BytesBytesCodec
from zarr.abc.store import ByteRequest
from zarr.abc.store import Store as _ZarrStore
from zarr.core.buffer import Buffer, BufferPrototype, NDBuffer
from zarr.registry import register_codec

from . import _tensorkit
from ._dtypes import array_of
from ._errors import InvalidArgumentError, UnsupportedError
from ._file import open as _open
from ._file import open_bytes
from ._dims import dimension_names
from ._zarr_chunked import ChunkedStore, children, is_chunked, slice_request

if TYPE_CHECKING:
    from zarr.core.array_spec import ArraySpec

_OUTPUTS = ("values", "coordinate", "key")


def _coordinate(message: bytes, name: str) -> np.ndarray:
    """Coordinate ``name`` of the cube a single GRIB message makes."""
    f = open_bytes(message)
    (cube,) = _tensorkit.grib_cubes(f._native, tree=False)
    return cube_coordinate(cube, name)


def cube_coordinate(cube: dict[str, Any], name: str) -> np.ndarray:
    """Coordinate ``name`` of ``cube`` (as ``_tensorkit.grib_cubes`` gives cubes) as numbers:
    instants in seconds since 1970, durations in seconds."""
    for c in cube["coordinates"]:
        if c["name"] == name:
            return np.asarray(c["values"])
    raise InvalidArgumentError(f"the cube has no coordinate {name!r}")


def _grib_values(message: bytes, output: str, name: str | None, field: int) -> np.ndarray:
    """What ``tensorkit.grib`` gives for one GRIB message (see the module's description)."""
    if output == "coordinate":
        return _coordinate(message, name or "")
    f = open_bytes(message)
    names = list(f)
    if field >= len(names):
        raise InvalidArgumentError(f"tensorkit.grib: the message has no field {field}")
    if output == "values":
        return np.asarray(f[names[field]])
    return np.asarray(f.info(names[field])["attributes"][name])


def _tensogram_values(
    chunk: bytes,
    descriptor: dict[str, Any] | None,
    output: str = "values",
    name: str | None = None,
    cube: dict[str, Any] | None = None,
) -> np.ndarray:
    """What ``tensorkit.tensogram`` gives for one chunk: a data object's payload decoded with
    ``descriptor``; without one, the object in a whole data frame, or (``output`` is
    ``coordinate``) coordinate ``name`` of the cube ``cube``'s options pick from the objects a
    metadata frame describes."""
    if output == "coordinate":
        (c,) = _tensorkit.tgm_frame_cubes(chunk, tree=False, **(cube or {}))
        return cube_coordinate(c, name or "")
    if descriptor is None:
        return array_of(_tensorkit.tgm_decode_frame(chunk))
    return array_of(_tensorkit.tgm_decode_payload(descriptor, chunk))


def _little_endian_bytes(values: np.ndarray, dtype: np.dtype, spec: ArraySpec) -> Buffer:
    """``values`` as the little-endian bytes of ``dtype`` that Zarr's ``bytes`` codec reads."""
    out = np.ascontiguousarray(values.astype(np.dtype(dtype).newbyteorder("<"), copy=False))
    if out.size != int(np.prod(spec.shape)):
        raise InvalidArgumentError(
            f"a chunk of shape {tuple(spec.shape)} decoded to {out.size} values"
        )
    return spec.prototype.buffer.from_bytes(out.tobytes())


def _check_grib_config(output: str, name: str | None) -> None:
    if output not in _OUTPUTS:
        raise InvalidArgumentError(f"tensorkit.grib: output {output!r} is not one of {_OUTPUTS}")
    if output != "values" and not name:
        raise InvalidArgumentError(f"tensorkit.grib: output {output!r} needs a name")


def _tensogram_fields(descriptor: Any, output: str, name: str | None, cube: Any, dtype: Any) -> dict[str, Any]:
    """A ``tensorkit.tensogram`` codec's or filter's configuration, checked, as its fields."""
    if descriptor is not None:
        if not isinstance(descriptor, dict) or "dtype" not in descriptor or "shape" not in descriptor:
            raise InvalidArgumentError("tensorkit.tensogram: the descriptor needs the object's dtype and shape")
        if output != "values":
            raise InvalidArgumentError("tensorkit.tensogram: a payload (with its descriptor) gives values only")
    if output not in ("values", "coordinate"):
        raise InvalidArgumentError(f"tensorkit.tensogram: output {output!r} is not 'values' or 'coordinate'")
    if output == "coordinate" and not name:
        raise InvalidArgumentError("tensorkit.tensogram: output 'coordinate' needs a name")
    return {
        "descriptor": None if descriptor is None else dict(descriptor),
        "output": output,
        "name": name,
        "cube": None if cube is None else dict(cube),
        "dtype": None if dtype is None else str(np.dtype(dtype)),
    }


class _DecodeOnly(BytesBytesCodec):
    """A bytes-to-bytes codec that only decodes."""

    is_fixed_size = False

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Any:
        return cls(**(data.get("configuration") or {}))

    async def _decode_single(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> Buffer:
        return self._decode_sync(chunk_bytes, chunk_spec)

    async def _encode_single(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> Buffer | None:
        raise UnsupportedError(f"{type(self).__name__} only decodes; it does not write")

    def compute_encoded_size(self, input_byte_length: int, chunk_spec: ArraySpec) -> int:
        raise UnsupportedError(f"{type(self).__name__}'s chunks are of any size")


@dataclass(frozen=True)
class GribCodec(_DecodeOnly):
    """One GRIB message per chunk, decoded to the chunk's values or one of its coordinates."""

    output: str = "values"
    name: str | None = None
    field: int = 0
    dtype: str = "float64"

    def __init__(self, *, output: str = "values", name: str | None = None, field: int = 0, dtype: str = "float64") -> None:
        _check_grib_config(output, name)
        object.__setattr__(self, "output", output)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "field", int(field))
        object.__setattr__(self, "dtype", str(np.dtype(dtype)))

    def to_dict(self) -> dict[str, Any]:
        config: dict[str, Any] = {"output": self.output, "dtype": self.dtype}
        if self.name is not None:
            config["name"] = self.name
        if self.field:
            config["field"] = self.field
        return {"name": "tensorkit.grib", "configuration": config}

    def _decode_sync(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> Buffer:
        values = _grib_values(chunk_bytes.to_bytes(), self.output, self.name, self.field)
        return _little_endian_bytes(values, chunk_spec.dtype.to_native_dtype(), chunk_spec)


@dataclass(frozen=True)
class TensogramCodec(_DecodeOnly):
    """One Tensogram data object per chunk: from its payload, with the object's descriptor in
    the configuration (``{"descriptor": {...}}``, as tensogram describes objects); or from its
    whole data frame, which carries its own descriptor and masks (``{"output": "values"}``);
    or one coordinate of the cube the objects a metadata frame describes make
    (``{"output": "coordinate", "name": ..., "cube": {...}}``)."""

    descriptor: dict[str, Any] | None = None
    output: str = "values"
    name: str | None = None
    cube: dict[str, Any] | None = None
    dtype: str | None = None

    def __init__(
        self,
        *,
        descriptor: dict[str, Any] | None = None,
        output: str = "values",
        name: str | None = None,
        cube: dict[str, Any] | None = None,
        dtype: str | None = None,
    ) -> None:
        for key, value in _tensogram_fields(descriptor, output, name, cube, dtype).items():
            object.__setattr__(self, key, value)

    def __hash__(self) -> int:
        return hash(json.dumps(self.to_dict(), sort_keys=True, default=str))

    def to_dict(self) -> dict[str, Any]:
        return {"name": "tensorkit.tensogram", "configuration": _tensogram_config(self)}

    def _decode_sync(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> Buffer:
        values = _tensogram_values(chunk_bytes.to_bytes(), self.descriptor, self.output, self.name, self.cube)
        return _little_endian_bytes(values, chunk_spec.dtype.to_native_dtype(), chunk_spec)


def _tensogram_config(c: Any) -> dict[str, Any]:
    """A Tensogram codec's or filter's configuration: only what it was given."""
    if c.descriptor is not None:
        return {"descriptor": c.descriptor}
    config: dict[str, Any] = {"output": c.output}
    for key in ("name", "cube", "dtype"):
        if getattr(c, key) is not None:
            config[key] = getattr(c, key)
    return config


register_codec("tensorkit.grib", GribCodec)
register_codec("tensorkit.tensogram", TensogramCodec)


class GribFilter(numcodecs.abc.Codec):
    """``tensorkit.grib`` as a numcodecs filter, for Zarr v2 stores (kerchunk JSON): the
    same configuration, the values as an array of its ``dtype``."""

    codec_id = "tensorkit.grib"

    def __init__(self, output: str = "values", name: str | None = None, field: int = 0, dtype: str = "float64") -> None:
        _check_grib_config(output, name)
        self.output, self.name, self.field, self.dtype = output, name, int(field), str(np.dtype(dtype))

    def decode(self, buf: Any, out: Any = None) -> np.ndarray:
        values = _grib_values(bytes(memoryview(buf)), self.output, self.name, self.field)
        return numcodecs.compat.ndarray_copy(values.astype(self.dtype, copy=False).ravel(), out)

    def encode(self, buf: Any) -> Any:
        raise UnsupportedError("tensorkit.grib only decodes; it does not write")


class TensogramFilter(numcodecs.abc.Codec):
    """``tensorkit.tensogram`` as a numcodecs filter, for Zarr v2 stores (kerchunk JSON): the
    same configuration; the values as an array of ``dtype`` when it is given."""

    codec_id = "tensorkit.tensogram"

    def __init__(
        self,
        descriptor: dict[str, Any] | None = None,
        output: str = "values",
        name: str | None = None,
        cube: dict[str, Any] | None = None,
        dtype: str | None = None,
    ) -> None:
        self.__dict__.update(_tensogram_fields(descriptor, output, name, cube, dtype))

    def get_config(self) -> dict[str, Any]:
        return {"id": self.codec_id, **_tensogram_config(self)}

    def decode(self, buf: Any, out: Any = None) -> np.ndarray:
        values = _tensogram_values(bytes(memoryview(buf)), self.descriptor, self.output, self.name, self.cube)
        dtype = values.dtype.newbyteorder("=") if self.dtype is None else np.dtype(self.dtype)
        return numcodecs.compat.ndarray_copy(values.astype(dtype, copy=False).ravel(), out)

    def encode(self, buf: Any) -> Any:
        raise UnsupportedError("tensorkit.tensogram only decodes; it does not write")


numcodecs.register_codec(GribFilter)
numcodecs.register_codec(TensogramFilter)


# tensorkit's dtype names that Zarr v3 has as data types of the same name (tensorkit's table,
# ``_tensorkit.dtypes()``).
_ZARR_DTYPES = {d["name"] for d in _tensorkit.dtypes() if d["zarr"]}


def _key(name: str) -> str:
    """A tensor name as a Zarr node name: ``/`` and ``%`` percent-encoded."""
    return name.replace("%", "%25").replace("/", "%2F")


def _json_value(v: Any) -> Any:
    """Attribute values as JSON holds them."""
    if isinstance(v, bytes):
        return v.hex()
    if isinstance(v, float) and not np.isfinite(v):
        return str(v)
    if isinstance(v, dict):
        return {str(k): _json_value(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_json_value(x) for x in v]
    if isinstance(v, np.generic):
        return v.item()
    return v


def _fill(dtype: str) -> Any:
    if dtype in ("bool", "bitmask"):
        return False
    if dtype.startswith("complex"):
        return [0.0, 0.0]
    return 0


class Store(_ZarrStore):
    """A Zarr v3 store over one Tensogram file or several (see the module): read-only, or,
    with ``mode="w"`` or ``"a"``, a ``ChunkedStore`` that writes one."""

    supports_writes = False
    supports_deletes = False
    supports_partial_writes = False
    supports_listing = True

    def __new__(
        cls,
        path: str | os.PathLike[str] | Iterable[str | os.PathLike[str]] | None = None,
        *,
        mode: str | None = None,
        read_only: bool | None = None,
        storage_options: dict[str, str] | None = None,
        **options: Any,
    ) -> Any:
        # Writing, or reading a file a ChunkedStore wrote: that store's layout. (No path:
        # unpickling, which sets the state afterwards.)
        if path is None:
            return super().__new__(cls)
        local = isinstance(path, (str, os.PathLike)) and not _tensorkit.is_url(os.fspath(path))
        writing = mode in ("w", "a") or read_only is False
        if writing or options or (local and is_chunked(path)):
            if not local:
                raise UnsupportedError("tensorkit.zarr.Store writes local files only")
            return ChunkedStore(path, mode=mode or ("a" if writing else "r"), read_only=read_only, **options)
        return super().__new__(cls)

    def __init__(
        self,
        path: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
        *,
        mode: str | None = None,
        read_only: bool | None = True,
        storage_options: dict[str, str] | None = None,
    ) -> None:
        super().__init__(read_only=True)
        paths = [path] if isinstance(path, (str, os.PathLike)) else list(path)
        if not paths:
            raise InvalidArgumentError("tensorkit.zarr.Store needs at least one file")
        self.paths = tuple(os.fspath(p) for p in paths)
        self.storage_options = dict(storage_options or {})
        self._file: Any = None
        self._nodes: dict[str, Any] = {}

    def __repr__(self) -> str:
        return f"tensorkit.zarr.Store({list(self.paths)!r})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Store)
            and other.paths == self.paths
            and other.storage_options == self.storage_options
        )

    def __hash__(self) -> int:
        return hash(self.paths)

    def __getstate__(self) -> dict[str, Any]:
        return {"paths": self.paths, "storage_options": self.storage_options}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(list(state["paths"]), storage_options=state.get("storage_options"))

    async def _open(self) -> None:
        await super()._open()
        self._index()

    def _index(self) -> None:
        """Lists the nodes: each key and what serves it (metadata bytes, or a tensor)."""
        f = _open(list(self.paths), storage_options=self.storage_options or None)
        nodes: dict[str, Any] = {}
        left_out = {}
        infos = {}
        for name in f:
            info = f.info(name)
            if info["dtype"] in _ZARR_DTYPES:
                infos[name] = info
            else:
                left_out[name] = f"dtype {info['dtype']} has no Zarr data type"
        dims = dimension_names(f, infos, None, {})
        for name, info in infos.items():
            dtype = info["dtype"]
            key = _key(name)
            shape = list(info["shape"])
            attributes = {k: _json_value(v) for k, v in info["attributes"].items() if k != "dim_names"}
            nodes[f"{key}/zarr.json"] = json.dumps({
                "zarr_format": 3,
                "node_type": "array",
                "shape": shape,
                "data_type": "bool" if dtype == "bitmask" else dtype,
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": shape}},
                "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
                "fill_value": _fill(dtype),
                "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                "attributes": attributes,
                "dimension_names": list(dims[name]),
            }).encode()
            chunk = "/".join(["c"] + ["0"] * len(shape))
            nodes[f"{key}/{chunk}"] = ("tensor", name, dtype)
        root = {k: _json_value(v) for k, v in (f.metadata or {}).items()}
        if left_out:
            root["tensorkit_left_out"] = left_out
        nodes["zarr.json"] = json.dumps({"zarr_format": 3, "node_type": "group", "attributes": root}).encode()
        self._file, self._nodes = f, nodes

    def _bytes(self, node: Any) -> bytes:
        if isinstance(node, bytes):
            return node
        _, name, dtype = node
        a = np.asarray(self._file[name])
        if dtype == "bitmask":
            a = a.astype(np.bool_)
        return np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<") if a.dtype.itemsize > 1 else a.dtype).tobytes()

    async def get(self, key: str, prototype: BufferPrototype, byte_range: ByteRequest | None = None) -> Buffer | None:
        await self._ensure_open()
        node = self._nodes.get(key)
        if node is None:
            return None
        return prototype.buffer.from_bytes(slice_request(self._bytes(node), byte_range))

    async def get_partial_values(
        self, prototype: BufferPrototype, key_ranges: Iterable[tuple[str, ByteRequest | None]]
    ) -> list[Buffer | None]:
        return [await self.get(k, prototype, r) for k, r in key_ranges]

    async def exists(self, key: str) -> bool:
        await self._ensure_open()
        return key in self._nodes

    async def set(self, key: str, value: Buffer) -> None:
        self._check_writable()

    async def delete(self, key: str) -> None:
        self._check_writable()

    async def list(self) -> AsyncIterator[str]:
        await self._ensure_open()
        for k in list(self._nodes):
            yield k

    async def list_prefix(self, prefix: str) -> AsyncIterator[str]:
        await self._ensure_open()
        for k in list(self._nodes):
            if k.startswith(prefix):
                yield k

    async def list_dir(self, prefix: str) -> AsyncIterator[str]:
        await self._ensure_open()
        for child in children(list(self._nodes), prefix):
            yield child

    def close(self) -> None:
        super().close()
        if self._file is not None:
            self._file.close()
        self._file, self._nodes = None, {}
