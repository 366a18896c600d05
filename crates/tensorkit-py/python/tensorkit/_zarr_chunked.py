"""``ChunkedStore``: a Zarr v3 store that writes a Tensogram file, one data object per chunk.

The file it leaves at ``close()`` is one Tensogram message. Each chunk of each array is one
object — the chunk's values (decoded from whatever codecs the array's metadata names), framed
with the store's pipeline and hash, its ``base`` entry naming its array (``name``), the
array's attributes, and the chunk's key (``tensorkit_zarr.key``). Every other key — the
``zarr.json`` documents, anything a caller stores — is kept in the message's ``_extra_``
under ``tensorkit_zarr.keys`` (text where it is UTF-8, bytes otherwise); the root group's
attributes are also ``_extra_`` keys of their own, for readers that know nothing of Zarr.

Until ``close()``, every key that is set is written at once, as a file of its own renamed
into place, into a directory beside the target (``.NAME.zarr-parts``): memory holds one
chunk at a time, copies of the store (pickled to dask workers) write their chunks there
safely side by side, and every instance — readers too — sees them. ``close()`` on the store
that was opened (not a copy) writes the target whole, the objects' encoded bytes copied as
they are, and renames it into place; only then is the directory removed. A crash leaves the
old file as it was and the keys written so far in the directory, which the next writer's
``close()`` takes in.
"""

from __future__ import annotations

import json
import os
import shutil
import urllib.parse
import uuid
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from typing import Any

import numpy as np
from zarr.abc.store import ByteRequest, OffsetByteRequest, RangeByteRequest, SuffixByteRequest
from zarr.abc.store import Store as _ZarrStore
from zarr.core.array_spec import ArrayConfig
from zarr.core.buffer import Buffer, BufferPrototype, default_buffer_prototype
from zarr.core.codec_pipeline import BatchedCodecPipeline
from zarr.core.metadata.v3 import ArrayV3Metadata

from . import _tensorkit
from ._errors import InvalidArgumentError, UnsupportedError
from .tensogram import TensogramFile, encode

#: The ``_extra_`` key (and ``base`` entry key) that holds the store's layout.
LAYOUT = "tensorkit_zarr"

_MODES = ("r", "w", "a")
# numpy kinds Tensogram holds as they are.
_KINDS = "fiucb"


def is_chunked(path: str | os.PathLike[str]) -> bool:
    """Whether the local Tensogram file at ``path`` was written by a ``ChunkedStore``."""
    try:
        meta = _tensorkit.TgmFile(os.fspath(path)).metadata(0)
    except Exception:
        return False
    return LAYOUT in (meta.extra or {})


def _not_ours(path: str) -> UnsupportedError:
    return UnsupportedError(
        f"{path}: not a file a ChunkedStore wrote (its first message has no {LAYOUT!r}): a Zarr "
        "store appends only to files it wrote; mode='w' starts a new one, and Store(path) reads "
        "any Tensogram file read-only"
    )


def children(keys: Iterable[str], prefix: str) -> Iterator[str]:
    """The names one level below ``prefix`` that ``keys`` hold, each once (a store's
    ``list_dir``)."""
    prefix = prefix.rstrip("/")
    base = f"{prefix}/" if prefix else ""
    seen = set()
    for k in keys:
        if k.startswith(base):
            child = k[len(base) :].split("/", 1)[0]
            if child not in seen:
                seen.add(child)
                yield child


def _quote(key: str) -> str:
    return urllib.parse.quote(key, safe="")


def _unquote(name: str) -> str:
    return urllib.parse.unquote(name)


def _write_atomically(path: str, data: bytes) -> None:
    """``data`` as the file ``path``: written to a name of its own, then renamed into place."""
    tmp = f"{path}.{uuid.uuid4().hex}.tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def slice_request(data: bytes, byte_range: ByteRequest | None) -> bytes:
    """The bytes of ``data`` a Zarr byte request asks for."""
    if byte_range is None:
        return data
    if isinstance(byte_range, RangeByteRequest):
        return data[byte_range.start : byte_range.end]
    if isinstance(byte_range, OffsetByteRequest):
        return data[byte_range.offset :]
    if isinstance(byte_range, SuffixByteRequest):
        return data[len(data) - byte_range.suffix :] if byte_range.suffix else b""
    raise InvalidArgumentError(f"Unexpected byte_range, got {byte_range!r}")


class ChunkedStore(_ZarrStore):
    """A Zarr v3 store over a Tensogram file, each chunk one data object (see the module).

    ``mode``: ``"r"`` reads, ``"w"`` starts an empty store (the file is replaced at
    ``close()``), ``"a"`` reads and writes what is there. ``pipeline``: the stages and
    parameters every chunk is written with (a descriptor's keys: ``{"compression": "zstd"}``,
    the default; ``{"encoding": "simple_packing", "sp_bits_per_value": 16}``...);
    ``pipelines``: per array path, replacing it. ``hash``: ``"xxh3"`` or ``None``.
    """

    supports_partial_writes = False
    supports_listing = True

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        mode: str = "r",
        read_only: bool | None = None,
        pipeline: Mapping[str, Any] | None = None,
        pipelines: Mapping[str, Mapping[str, Any]] | None = None,
        hash: str | None = "xxh3",
        _owner: bool = True,
    ) -> None:
        if mode not in _MODES:
            raise InvalidArgumentError(f"mode {mode!r} is not one of {_MODES}")
        if read_only is not None:
            mode = "r" if read_only else (mode if mode != "r" else "a")
        super().__init__(read_only=mode == "r")
        self.path = os.fspath(path)
        self.mode = mode
        self.pipeline = dict({"compression": "zstd"} if pipeline is None else pipeline)
        self.pipelines = {str(k): dict(v) for k, v in (pipelines or {}).items()}
        self.hash = hash
        self._owner = _owner
        head, name = os.path.split(os.path.abspath(self.path))
        self._parts = os.path.join(head, f".{name}.zarr-parts")
        self._base: dict[str, Any] | None = None
        if mode == "a" and _owner and os.path.exists(self.path) and not self._truncated() and not is_chunked(self.path):
            raise _not_ours(self.path)
        if mode == "w" and _owner:
            shutil.rmtree(self._parts, ignore_errors=True)
            os.makedirs(self._dir("meta"))
            _write_atomically(os.path.join(self._parts, "truncated"), b"")

    # -- identity ----------------------------------------------------------------------------

    @property
    def supports_writes(self) -> bool:  # type: ignore[override]
        return not self.read_only

    @property
    def supports_deletes(self) -> bool:  # type: ignore[override]
        return not self.read_only

    def __repr__(self) -> str:
        return f"tensorkit.zarr.ChunkedStore({self.path!r}, mode={self.mode!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ChunkedStore) and (other.path, other.read_only) == (self.path, self.read_only)

    def __hash__(self) -> int:
        return hash((self.path, self.read_only))

    def __getstate__(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "mode": "a" if self.mode == "w" else self.mode,
            "pipeline": self.pipeline,
            "pipelines": self.pipelines,
            "hash": self.hash,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        # A copy (a dask worker's) writes its keys beside the owner's, never the file.
        self.__init__(state["path"], mode=state["mode"], pipeline=state["pipeline"],
                      pipelines=state["pipelines"], hash=state["hash"], _owner=False)

    def with_read_only(self, read_only: bool = False) -> ChunkedStore:
        return ChunkedStore(self.path, mode="r" if read_only else "a", pipeline=self.pipeline,
                            pipelines=self.pipelines, hash=self.hash, _owner=False)

    async def _open(self) -> None:
        await super()._open()
        self._base_layout()

    # -- where keys are ----------------------------------------------------------------------

    def _dir(self, kind: str) -> str:
        return os.path.join(self._parts, kind)

    def _part(self, kind: str, key: str) -> str:
        return os.path.join(self._dir(kind), _quote(key) + (".tgm" if kind == "chunks" else ""))

    def _truncated(self) -> bool:
        return os.path.exists(os.path.join(self._parts, "truncated"))

    def _base_layout(self) -> dict[str, Any]:
        """What the file holds: ``keys`` (key to bytes) and ``chunks`` (key to object index)."""
        if self._base is None:
            base: dict[str, Any] = {"keys": {}, "chunks": {}}
            if not self._truncated() and os.path.exists(self.path):
                f = _tensorkit.TgmFile(self.path)
                meta = f.metadata(0)
                layout = (meta.extra or {}).get(LAYOUT)
                if not isinstance(layout, dict):
                    raise _not_ours(self.path)
                for k, v in (layout.get("keys") or {}).items():
                    base["keys"][k] = v.encode() if isinstance(v, str) else bytes(v)
                for j, entry in enumerate(meta.base):
                    key = (entry.get(LAYOUT) or {}).get("key")
                    if key is not None:
                        base["chunks"][key] = j
                f.close()
            self._base = base
        return self._base

    def _deleted(self, key: str) -> bool:
        return os.path.exists(self._part("deleted", key))

    def _keys(self) -> list[str]:
        keys: set[str] = set()
        for kind in ("meta", "chunks"):
            if os.path.isdir(self._dir(kind)):
                for name in os.listdir(self._dir(kind)):
                    if name.endswith(".tmp"):
                        continue
                    keys.add(_unquote(name[:-4] if kind == "chunks" else name))
        base = self._base_layout()
        keys.update(k for k in [*base["keys"], *base["chunks"]] if not self._deleted(k))
        return sorted(keys)

    def _raw(self, key: str) -> bytes | None:
        """A key's bytes, when it is not a chunk held as an object."""
        p = self._part("meta", key)
        if os.path.exists(p):
            with open(p, "rb") as f:
                return f.read()
        if os.path.exists(self._part("chunks", key)) or self._deleted(key):
            return None
        return self._base_layout()["keys"].get(key)

    # -- chunks --------------------------------------------------------------------------------

    def _chunk(self, key: str) -> tuple[str, tuple[int, ...], ArrayV3Metadata] | None:
        """The array, chunk coordinates and array metadata of ``key`` when it is a chunk of
        an array this store can hold as objects."""
        parts = key.split("/")
        for i in range(len(parts) - 1, -1, -1):
            tail = "/".join(parts[i:])
            if not (tail == "c" or tail.startswith(("c/", "c."))):
                continue
            array = "/".join(parts[:i])
            meta = self._array(array)
            if meta is None:
                continue
            sep = tail[1:2] or "/"
            try:
                coords = tuple(int(c) for c in tail[2:].split(sep)) if len(tail) > 1 else ()
            except ValueError:
                return None
            if len(coords) != meta.ndim or meta.encode_chunk_key(coords) != tail:
                return None
            return array, coords, meta
        return None

    def _array(self, array: str) -> ArrayV3Metadata | None:
        raw = self._raw(f"{array}/zarr.json" if array else "zarr.json")
        if raw is None:
            return None
        try:
            doc = json.loads(raw)
            if doc.get("node_type") != "array" or doc.get("zarr_format") != 3:
                return None
            meta = ArrayV3Metadata.from_dict(doc)
        except Exception:
            return None
        if any(type(c).__name__ == "ShardingCodec" for c in meta.codecs):
            return None
        if np.dtype(meta.dtype.to_native_dtype()).kind not in _KINDS:
            return None
        return meta

    @staticmethod
    def _spec(meta: ArrayV3Metadata, coords: tuple[int, ...], prototype: BufferPrototype) -> Any:
        return meta.get_chunk_spec(coords, ArrayConfig.from_dict({}), prototype)

    async def _decode(self, meta: ArrayV3Metadata, coords: tuple[int, ...], data: Buffer) -> np.ndarray | None:
        pipeline = BatchedCodecPipeline.from_codecs(meta.codecs)
        spec = self._spec(meta, coords, default_buffer_prototype())
        (out,) = await pipeline.decode([(data, spec)])
        return None if out is None else out.as_numpy_array()

    async def _encode(self, meta: ArrayV3Metadata, coords: tuple[int, ...], values: np.ndarray, prototype: BufferPrototype) -> bytes:
        pipeline = BatchedCodecPipeline.from_codecs(meta.codecs)
        spec = self._spec(meta, coords, prototype)
        nd = prototype.nd_buffer.from_numpy_array(values.reshape(spec.shape))
        (out,) = await pipeline.encode([(nd, spec)])
        return b"" if out is None else out.to_bytes()

    def _chunk_message(self, array: str, key: str, values: np.ndarray) -> bytes:
        """A chunk's values as a message of one object."""
        pipeline = self.pipelines.get(array, self.pipeline)
        a = np.ascontiguousarray(values)
        desc = {"type": "ntensor", "shape": list(a.shape), "dtype": str(a.dtype) if a.dtype != np.bool_ else "bitmask", **pipeline}
        entry = {"name": array, LAYOUT: {"key": key}}
        return encode({"base": [entry]}, [(desc, a)], hash=self.hash)

    def _values(self, key: str) -> np.ndarray | None:
        """A chunk held as an object: its values."""
        p = self._part("chunks", key)
        if os.path.exists(p):
            with TensogramFile.open(p) as f:
                return np.asarray(f.file_decode_object(0, 0)["data"])
        if os.path.exists(self._part("meta", key)) or self._deleted(key):
            return None
        j = self._base_layout()["chunks"].get(key)
        if j is None:
            return None
        with TensogramFile.open(self.path) as f:
            return np.asarray(f.file_decode_object(0, j)["data"])

    # -- the Store interface --------------------------------------------------------------------

    async def get(self, key: str, prototype: BufferPrototype, byte_range: ByteRequest | None = None) -> Buffer | None:
        await self._ensure_open()
        raw = self._raw(key)
        if raw is None:
            values = self._values(key)
            if values is None:
                return None
            chunk = self._chunk(key)
            if chunk is None:
                raise InvalidArgumentError(f"{self.path}: chunk {key!r} has no array metadata to encode it with")
            _, coords, meta = chunk
            raw = await self._encode(meta, coords, values, prototype)
        return prototype.buffer.from_bytes(slice_request(raw, byte_range))

    async def get_partial_values(
        self, prototype: BufferPrototype, key_ranges: Iterable[tuple[str, ByteRequest | None]]
    ) -> list[Buffer | None]:
        return [await self.get(k, prototype, r) for k, r in key_ranges]

    async def exists(self, key: str) -> bool:
        await self._ensure_open()
        return key in self._keys()

    async def set(self, key: str, value: Buffer) -> None:
        self._check_writable()
        await self._ensure_open()
        data = value.to_bytes()
        chunk = self._chunk(key)
        values = None if chunk is None else await self._decode(chunk[2], chunk[1], value)
        for kind in ("meta", "chunks", "deleted"):
            os.makedirs(self._dir(kind), exist_ok=True)
        if chunk is not None and values is not None:
            _write_atomically(self._part("chunks", key), self._chunk_message(chunk[0], key, values))
            self._remove("meta", key)
        else:
            _write_atomically(self._part("meta", key), data)
            self._remove("chunks", key)
        self._remove("deleted", key)

    async def set_if_not_exists(self, key: str, value: Buffer) -> None:
        if not await self.exists(key):
            await self.set(key, value)

    def _remove(self, kind: str, key: str) -> None:
        try:
            os.unlink(self._part(kind, key))
        except FileNotFoundError:
            pass

    async def delete(self, key: str) -> None:
        self._check_writable()
        await self._ensure_open()
        self._remove("meta", key)
        self._remove("chunks", key)
        base = self._base_layout()
        if key in base["keys"] or key in base["chunks"]:
            os.makedirs(self._dir("deleted"), exist_ok=True)
            _write_atomically(self._part("deleted", key), b"")

    async def list(self) -> AsyncIterator[str]:
        await self._ensure_open()
        for k in self._keys():
            yield k

    async def list_prefix(self, prefix: str) -> AsyncIterator[str]:
        await self._ensure_open()
        for k in self._keys():
            if k.startswith(prefix):
                yield k

    async def list_dir(self, prefix: str) -> AsyncIterator[str]:
        await self._ensure_open()
        for child in children(self._keys(), prefix):
            yield child

    # -- writing the file ------------------------------------------------------------------------

    def close(self) -> None:
        """Writes the file (the store that was opened for writing, not a copy of it), then
        lets go of the directory of keys written."""
        if self._owner and not self.read_only and os.path.isdir(self._parts):
            self._write_file()
            shutil.rmtree(self._parts, ignore_errors=True)
            self._base = None
        super().close()

    def _write_file(self) -> None:
        objects: list[tuple[str, int, int, str]] = []
        opaque: dict[str, Any] = {}
        base = self._base_layout()
        for key in self._keys():
            part = self._part("chunks", key)
            if os.path.exists(part):
                objects.append((part, 0, 0, key))
            elif (raw := self._raw(key)) is not None:
                try:
                    opaque[key] = raw.decode()
                except UnicodeDecodeError:
                    opaque[key] = raw
            elif key in base["chunks"]:
                objects.append((self.path, 0, base["chunks"][key], key))
        extra: dict[str, Any] = {}
        root = opaque.get("zarr.json")
        if isinstance(root, str):
            try:
                attributes = json.loads(root).get("attributes") or {}
            except (ValueError, AttributeError):
                attributes = {}
            extra.update({k: v for k, v in attributes.items() if k != LAYOUT and isinstance(k, str)})
        extra[LAYOUT] = {"version": 1, "keys": opaque}
        entries = []
        for _, _, _, key in objects:
            chunk = self._chunk(key)
            array = chunk[0] if chunk else key.rsplit("/c", 1)[0]
            attrs = self._attributes(array)
            entries.append({**attrs, "name": array, LAYOUT: {"key": key}})
        metadata = {"base": entries, "_extra_": extra}
        if objects:
            _tensorkit.tgm_regroup(self.path, [(p, m, o) for p, m, o, _ in objects], metadata)
        else:
            _write_atomically(self.path, bytes(encode(metadata, [])))

    def _attributes(self, array: str) -> dict[str, Any]:
        raw = self._raw(f"{array}/zarr.json" if array else "zarr.json")
        try:
            attributes = json.loads(raw or b"{}").get("attributes") or {}
        except (ValueError, AttributeError):
            return {}
        return {k: v for k, v in attributes.items() if k not in ("name", LAYOUT, "_reserved_")}
