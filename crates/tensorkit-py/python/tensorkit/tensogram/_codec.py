"""Messages as bytes: encode, decode, describe, scan, validate and hash, under tensogram's
names (the package's ``__init__`` lists them).
"""


from __future__ import annotations

import os
import sys
import warnings
from collections import namedtuple
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from .. import _tensorkit
from .._dtypes import array_of, from_numpy, to_numpy
from .._errors import ChecksumMismatchError, IntegrityError, InvalidArgumentError, MissingHashError


#: The wire version tensorkit writes.
WIRE_VERSION = 3

#: A stored hash does not match the bytes (tensogram's name for it).
HashMismatchError = ChecksumMismatchError

#: A decoded message: its ``Metadata`` and a list of ``(DataObjectDescriptor, ndarray)``.
Message = namedtuple("Message", ["metadata", "objects"])

_RESERVED = "_reserved_"
# The descriptor keys that are fields; every other key is a pipeline parameter.
_FIELDS = frozenset(
    ["type", "ndim", "shape", "strides", "dtype", "byte_order", "encoding", "filter", "compression", "masks"]
)


class DataObjectDescriptor:
    """What a data object is (type, shape, strides, dtype, byte order) and how it is stored
    (encoding, filter, compression and their ``params``)."""

    __slots__ = ("_d",)

    def __init__(self, fields: Mapping[str, Any]):
        self._d = dict(fields)

    @property
    def obj_type(self) -> str:
        return self._d["type"]

    @property
    def ndim(self) -> int:
        return self._d["ndim"]

    @property
    def shape(self) -> list[int]:
        return list(self._d["shape"])

    @property
    def strides(self) -> list[int]:
        return list(self._d["strides"])

    @property
    def dtype(self) -> str:
        return self._d["dtype"]

    @property
    def byte_order(self) -> str:
        return self._d.get("byte_order", sys.byteorder)

    @property
    def encoding(self) -> str:
        return self._d["encoding"]

    @property
    def filter(self) -> str:
        return self._d["filter"]

    @property
    def compression(self) -> str:
        return self._d["compression"]

    @property
    def masks(self) -> dict[str, Any] | None:
        return self._d.get("masks")

    @property
    def params(self) -> dict[str, Any]:
        """The pipeline's parameters: every key that is not a field."""
        return {k: v for k, v in self._d.items() if k not in _FIELDS}

    @property
    def hash(self) -> None:
        """Always ``None``: wire version 3 keeps hashes in the frames, not the descriptor."""
        return None

    def to_dict(self) -> dict[str, Any]:
        """Every key of the descriptor, as the message stores it."""
        return dict(self._d)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DataObjectDescriptor) and other._d == self._d

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"DataObjectDescriptor(type={self.obj_type!r}, shape={self.shape}, dtype={self.dtype!r}, "
            f"encoding={self.encoding!r}, compression={self.compression!r})"
        )


class Metadata(Mapping[str, Any]):
    """A message's metadata. ``base[i]`` is object ``i``'s dict; ``extra`` the message-level
    keys; ``reserved`` what the encoder recorded. ``meta[key]`` finds ``key`` in the first
    ``base`` entry that has it, then in ``extra``."""

    __slots__ = ("_base", "_extra", "_reserved", "_version")

    def __init__(self, version: int, base: list[dict[str, Any]], extra: dict[str, Any], reserved: dict[str, Any]):
        self._version = version
        self._base = base
        self._extra = extra
        self._reserved = reserved

    @property
    def version(self) -> int:
        """The wire version of the message."""
        return self._version

    @property
    def base(self) -> list[dict[str, Any]]:
        """Per-object metadata, one dict per object (with the encoder's ``_reserved_``)."""
        return self._base

    @property
    def extra(self) -> dict[str, Any]:
        """Message-level metadata."""
        return self._extra

    @property
    def reserved(self) -> dict[str, Any]:
        """What the encoder recorded: its name and version, the time, a uuid."""
        return self._reserved

    @property
    def num_objects(self) -> int:
        return len(self._base)

    def keys(self) -> list[str]:  # type: ignore[override]
        """Every key ``meta[key]`` finds, each once, ``base`` entries first."""
        seen: dict[str, None] = {}
        for entry in self._base:
            for k in entry:
                if k != _RESERVED:
                    seen.setdefault(k)
        for k in self._extra:
            seen.setdefault(k)
        return list(seen)

    def values(self) -> list[Any]:  # type: ignore[override]
        """The value ``meta[key]`` finds for each of :meth:`keys`, in their order."""
        return [self[k] for k in self.keys()]

    def items(self) -> list[tuple[str, Any]]:  # type: ignore[override]
        """``(key, meta[key])`` for each of :meth:`keys`, in their order."""
        return [(k, self[k]) for k in self.keys()]

    def __getitem__(self, key: str) -> Any:
        if key != _RESERVED:
            for entry in self._base:
                if key in entry:
                    return entry[key]
        if key in self._extra:
            return self._extra[key]
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self.keys())

    def get_path(self, path: str, default: Any = None) -> Any:
        """A value by dotted path, message-wide: ``meta.get_path("mars.class")`` — the first
        ``base`` entry where the whole path resolves (``_reserved_`` hidden), then ``extra``;
        ``extra.<path>`` (or ``_extra_.<path>``) looks in ``extra`` alone."""
        head, _, rest = path.partition(".")
        if head in ("extra", "_extra_") and rest:
            return _walk(self._extra, rest, default)
        if head != _RESERVED:
            for entry in self._base:
                found = _walk(entry, path, _ABSENT)
                if found is not _ABSENT:
                    return found
        return _walk(self._extra, path, default)

    def get_path_at(self, obj: int, path: str, default: Any = None) -> Any:
        """A value by dotted path within ``base[obj]`` only (``_reserved_`` hidden; an object
        the message does not have holds nothing)."""
        if not 0 <= obj < len(self._base) or path.partition(".")[0] == _RESERVED:
            return default
        return _walk(self._base[obj], path, default)

    def has_path(self, path: str) -> bool:
        return self.get_path(path, _ABSENT) is not _ABSENT

    def has_path_at(self, obj: int, path: str) -> bool:
        return self.get_path_at(obj, path, _ABSENT) is not _ABSENT

    def __repr__(self) -> str:
        extra = ", ".join(f'"{k}"' for k in self._extra)
        return f"Metadata(version={self._version}, base_len={len(self._base)}, extra_keys=[{extra}])"


_ABSENT = object()


def _walk(value: Any, path: str, default: Any) -> Any:
    for part in path.split(".") if path else []:
        if not isinstance(value, dict) or part not in value:
            return default
        value = value[part]
    return value


def _metadata(native: Any) -> Metadata:
    """The metadata of a native ``TgmMetadata``."""
    return Metadata(native.version, native.base, native.extra, native.reserved)


def _message(native: Any) -> Message:
    """A decoded message from a native ``TgmMessage``: metadata and objects."""
    objects = [(DataObjectDescriptor(o.descriptor), array_of(o.array)) for o in native.objects]
    return Message(_metadata(native.metadata), objects)


# Descriptor keys that are application metadata, which belongs in ``meta["base"][i]``: a
# descriptor holding one still encodes (the key kept among its parameters), with the
# warning tensogram gives.
_METADATA_LIKE = (
    "name", "param", "shortName", "long_name", "description", "units", "dim_names", "mars",
    "cf", "product", "instrument",
)


def _warn_metadata_like(descriptor: Mapping[str, Any], stacklevel: int) -> None:
    """One ``UserWarning`` for a descriptor holding application-metadata keys, naming them,
    attributed to the caller ``stacklevel`` frames up."""
    keys = [k for k in descriptor if k in _METADATA_LIKE]
    if keys:
        listed = ", ".join(f"'{k}'" for k in keys)
        warnings.warn(
            f"descriptor contains application-metadata-like keys ({listed}) that were kept among "
            "the descriptor's parameters. Application metadata belongs in meta['base'][i]: in "
            "the descriptor it encodes, but is not where readers look for it.",
            UserWarning,
            stacklevel=stacklevel + 1,
        )


def _prepare(i: int, descriptor: Any, data: Any) -> tuple[dict[str, Any], Any, bool]:
    """The descriptor with the dtype, shape and byte order the array gives, the bytes, and
    whether they are one byte per element of a bitmask."""
    if not isinstance(descriptor, Mapping):
        raise InvalidArgumentError(f"object {i}: the descriptor must be a dict, not {type(descriptor).__name__}")
    # What else a descriptor may leave out (type, ndim, strides, the stages) is filled in
    # by Rust, as tensogram's encoder fills it; here only what the array itself tells.
    d = dict(descriptor)
    order = d.setdefault("byte_order", sys.byteorder)
    one_per_element = False
    if isinstance(data, (bytes, bytearray, memoryview)):
        if "dtype" not in d or "shape" not in d:
            raise InvalidArgumentError(f"object {i}: raw bytes need 'dtype' and 'shape' in the descriptor")
        raw = data
    else:
        if not isinstance(data, np.ndarray) and "dtype" in d and d["dtype"] != "bitmask":
            data = np.asarray(data, dtype=to_numpy(d["dtype"]))
        arr = np.asarray(data)
        dtype = d.setdefault("dtype", "bitmask" if arr.dtype == np.bool_ else from_numpy(arr.dtype))
        d.setdefault("shape", list(arr.shape))
        if dtype == "bitmask":
            arr = np.ascontiguousarray(arr, dtype=np.bool_)
            one_per_element = True
        else:
            want = to_numpy(dtype)
            if arr.dtype.itemsize > 1:
                target = arr.dtype.newbyteorder("<" if order == "little" else ">")
            else:
                target = arr.dtype
            bits_of_want = arr.dtype.itemsize == want.itemsize and arr.dtype.kind in "uV"
            if np.dtype(arr.dtype).name != want.name and not bits_of_want:
                raise InvalidArgumentError(f"object {i}: the array is {arr.dtype}; the descriptor says {dtype}")
            arr = np.ascontiguousarray(arr, dtype=target)
        raw = arr.reshape(-1).view(np.uint8) if arr.size else b""
    return d, raw, one_per_element


def encode(
    global_meta_dict: Mapping[str, Any] | None,
    descriptors_and_data: Sequence[tuple[Mapping[str, Any], Any]],
    hash: str | None = "xxh3",
    threads: int = 0,
    allow_nan: bool = False,
    allow_inf: bool = False,
    nan_mask_method: str | None = None,
    pos_inf_mask_method: str | None = None,
    neg_inf_mask_method: str | None = None,
    small_mask_threshold_bytes: int | None = None,
    *,
    _stacklevel: int = 2,
) -> bytes:
    """Encodes arrays into one message; its bytes.

    ``global_meta_dict`` is ``{"base": [one dict per object], ...}`` with any other keys
    (message-level metadata). Each descriptor names ``type``, ``shape`` and ``dtype`` (taken
    from the array when left out), optionally ``byte_order``, ``encoding``
    (``simple_packing``), ``filter`` (``shuffle``), ``compression`` (``zstd``, ``lz4``,
    ``szip``...) and their parameters. ``hash`` is ``"xxh3"`` or ``None``. NaN and ±Inf are
    refused unless ``allow_nan`` / ``allow_inf`` (they are then stored in masks).
    ``threads`` is accepted for tensogram's signature; encoding runs on one thread.
    """
    hashing = _hashing(hash)
    mask_method = _mask_method(nan_mask_method, pos_inf_mask_method, neg_inf_mask_method)
    del threads
    objects = [_prepare(i, d, data) for i, (d, data) in enumerate(descriptors_and_data)]
    for d, _, _ in objects:
        _warn_metadata_like(d, _stacklevel)
    return _tensorkit.tgm_encode(
        _global_meta(global_meta_dict),
        objects,
        hash=hashing,
        allow_nan=allow_nan,
        allow_inf=allow_inf,
        mask_method=mask_method,
        small_mask_threshold=small_mask_threshold_bytes,
    )


def _global_meta(meta: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """The message metadata as the encoder takes it: ``extra``, tensogram's convenience name
    for ``_extra_`` (message-level keys), must be a dict and joins ``_extra_`` (whose own
    keys win)."""
    if meta is None or "extra" not in meta:
        return meta
    extra = meta["extra"]
    if not isinstance(extra, Mapping):
        raise InvalidArgumentError(
            f"'extra' must be a dict when given for '_extra_' (message-level metadata), not {type(extra).__name__}"
        )
    out = {k: v for k, v in meta.items() if k != "extra"}
    out["_extra_"] = {**extra, **dict(meta.get("_extra_") or {})}
    return out


def _mask_method(nan_mask_method: str | None, pos_inf_mask_method: str | None, neg_inf_mask_method: str | None) -> str | None:
    """The one mask method tensorkit applies to NaN and ±Inf, from tensogram's three."""
    methods = {m for m in (nan_mask_method, pos_inf_mask_method, neg_inf_mask_method) if m is not None}
    if len(methods) > 1:
        raise InvalidArgumentError(f"tensorkit uses one mask method for NaN and ±Inf; got {sorted(methods)}")
    return methods.pop() if methods else None


def _hashing(hash: str | None) -> bool:
    if hash not in ("xxh3", None):
        raise InvalidArgumentError(f"unknown hash type {hash!r}: 'xxh3' or None")
    return hash is not None


def encode_pre_encoded(
    global_meta_dict: Mapping[str, Any] | None,
    descriptors_and_data: Sequence[tuple[Mapping[str, Any], Any]],
    hash: str | None = "xxh3",
    threads: int = 0,
) -> bytes:
    """Frames payloads that are already encoded into one message; its bytes. Each descriptor
    must carry every parameter of its pipeline (``sp_reference_value``... for
    ``simple_packing``; ``szip_block_offsets`` for range reads after ``szip``); each payload
    (``bytes``-like) is framed and hashed as it is. ``threads`` is accepted for tensogram's
    signature."""
    del threads
    objects = []
    for i, (d, data) in enumerate(descriptors_and_data):
        if not isinstance(d, Mapping):
            raise InvalidArgumentError(f"object {i}: the descriptor must be a dict, not {type(d).__name__}")
        if isinstance(data, np.ndarray):
            raise InvalidArgumentError(f"object {i}: encode_pre_encoded requires bytes data (got numpy.ndarray); pass its encoded bytes")
        _warn_metadata_like(d, 2)
        objects.append((dict(d), data))
    return _tensorkit.tgm_encode_pre_encoded(_global_meta(global_meta_dict), objects, hash=_hashing(hash))


class StreamingEncoder:
    """A message written object by object (tensogram's ``StreamingEncoder``): each
    ``write_object`` encodes one object and writes its frame at once; ``finish`` adds the
    footer (index, hashes, metadata) and returns the message's bytes (``total_length`` 0, as
    a stream that cannot seek writes it; ``finish_backfilled`` writes the real length).
    ``finish_and_reset`` and ``finish_and_reset_backfilled`` begin the next message under
    the same metadata. After ``finish`` every call raises ``RuntimeError``."""

    def __init__(
        self,
        global_meta_dict: Mapping[str, Any] | None,
        hash: str | None = "xxh3",
        threads: int = 0,
        allow_nan: bool = False,
        allow_inf: bool = False,
        nan_mask_method: str | None = None,
        pos_inf_mask_method: str | None = None,
        neg_inf_mask_method: str | None = None,
        small_mask_threshold_bytes: int | None = None,
    ):
        del threads
        self._native = _tensorkit.TgmStreamingEncoder(
            _global_meta(global_meta_dict),
            hash=_hashing(hash),
            allow_nan=allow_nan,
            allow_inf=allow_inf,
            mask_method=_mask_method(nan_mask_method, pos_inf_mask_method, neg_inf_mask_method),
            small_mask_threshold=small_mask_threshold_bytes,
        )

    def write_object(self, descriptor: Mapping[str, Any], data: Any) -> None:
        """Encodes ``data`` (an array, or raw bytes with ``dtype`` and ``shape`` in the
        descriptor) through the descriptor's pipeline and writes its frame."""
        d, raw, one_per_element = _prepare(self._native.object_count, descriptor, data)
        _warn_metadata_like(d, 2)
        self._native.write_object(d, raw, one_per_element)

    def write_object_pre_encoded(self, descriptor: Mapping[str, Any], data: Any) -> None:
        """Writes the frame of an object whose payload (``bytes``-like) is already encoded."""
        if isinstance(data, np.ndarray):
            raise InvalidArgumentError("write_object_pre_encoded requires bytes data (got numpy.ndarray)")
        _warn_metadata_like(descriptor, 2)
        self._native.write_object_pre_encoded(dict(descriptor), data)

    @property
    def object_count(self) -> int:
        """How many objects the message being written holds so far."""
        return self._native.object_count

    def finish(self) -> bytes:
        return self._native.finish()

    def finish_backfilled(self) -> bytes:
        return self._native.finish_backfilled()

    def finish_and_reset(self) -> bytes:
        return self._native.finish_and_reset()

    def finish_and_reset_backfilled(self) -> bytes:
        return self._native.finish_and_reset_backfilled()


def decode(
    buf: Any,
    native_byte_order: bool = True,
    threads: int = 0,
    restore_non_finite: bool = True,
    verify_hash: bool = False,
) -> Message:
    """Decodes a message: ``Message(metadata, objects)`` with ``objects`` a list of
    ``(DataObjectDescriptor, ndarray)``. The objects decode in parallel (``threads=0``: every
    core; ``1``: this thread)."""
    return _message(
        _tensorkit.tgm_decode(
            buf,
            verify_hash=verify_hash,
            native_byte_order=native_byte_order,
            restore_non_finite=restore_non_finite,
            threads=threads,
        )
    )


#: A message decoded with its masks: ``metadata`` and ``(descriptor, payload, masks)`` per
#: object (``decode_with_masks``).
MaskedMessage = namedtuple("MaskedMessage", ["metadata", "objects"])

# What each mask kind marks, in the decoded values.
_MASK_TESTS = {"nan": np.isnan, "inf+": np.isposinf, "inf-": np.isneginf}


def _marked(kind: str, values: np.ndarray) -> np.ndarray:
    """The elements of ``values`` mask ``kind`` marks: for complex values, those with either
    part so; other floats (the ML ones included) tested as float64."""
    test = _MASK_TESTS[kind]
    if np.iscomplexobj(values):
        return test(values.real) | test(values.imag)
    return test(values.astype(np.float64))


def decode_with_masks(buf: Any, *, native_byte_order: bool = True, verify_hash: bool = False) -> MaskedMessage:
    """Decodes a message keeping NaN and ±Inf apart: each object's payload as stored (zeros
    where the masks say a NaN or an infinity was) and, per mask kind the object's descriptor
    lists (``nan``, ``inf+``, ``inf-``), a bool array of which elements it marks."""
    stored = decode(buf, native_byte_order=native_byte_order, verify_hash=verify_hash, restore_non_finite=False)
    restored = decode(buf, native_byte_order=native_byte_order, restore_non_finite=True)
    objects = []
    for (desc, payload), (_, values) in zip(stored.objects, restored.objects):
        kinds = desc.masks or {}
        masks = {k: _marked(k, values) for k in kinds if k in _MASK_TESTS}
        objects.append((desc, payload, masks))
    return MaskedMessage(stored.metadata, objects)


def decode_metadata(buf: Any) -> Metadata:
    """The metadata alone; no payload is decoded."""
    return _metadata(_tensorkit.tgm_describe(buf).metadata)


def decode_descriptors(buf: Any) -> tuple[Metadata, list[DataObjectDescriptor]]:
    """The metadata and every object's descriptor; no payload is decoded."""
    described = _tensorkit.tgm_describe(buf)
    return _metadata(described.metadata), [DataObjectDescriptor(d) for d in described.descriptors]


def decode_object(
    buf: Any,
    index: int,
    native_byte_order: bool = True,
    threads: int = 0,
    restore_non_finite: bool = True,
    verify_hash: bool = False,
) -> tuple[Metadata, DataObjectDescriptor, np.ndarray]:
    """Object ``index`` alone: ``(Metadata, DataObjectDescriptor, ndarray)``. Only the
    header and that object's frame are read."""
    meta, [(d, arr)] = _message(
        _tensorkit.tgm_decode(
            buf,
            index=_object_index(index),
            verify_hash=verify_hash,
            native_byte_order=native_byte_order,
            restore_non_finite=restore_non_finite,
            threads=threads,
        )
    )
    return meta, d, arr


def _object_index(index: int) -> int:
    if index < 0:
        raise InvalidArgumentError(f"object index {index} is negative")
    return index


def _ranges(arr: np.ndarray, ranges: Sequence[tuple[int, int]], join: bool) -> Any:
    flat = arr.reshape(-1)
    parts = []
    for start, count in ranges:
        if start < 0 or count < 0 or start + count > flat.size:
            raise InvalidArgumentError(f"range ({start}, {count}) is outside the object's {flat.size} elements")
        parts.append(flat[start : start + count].copy())
    if join:
        return np.concatenate(parts) if parts else flat[:0].copy()
    return parts


def decode_range(
    buf: Any,
    object_index: int,
    ranges: Sequence[tuple[int, int]],
    join: bool = False,
    native_byte_order: bool = True,
    threads: int = 0,
    restore_non_finite: bool = True,
) -> list[np.ndarray] | np.ndarray:
    """Elements ``[start, start + count)`` of object ``object_index`` (flattened, C order)
    for each ``(start, count)`` in ``ranges``: a list of 1-d arrays, or one joined array.
    Only what the object's stages need is decoded: a raw payload is sliced, and simple
    packing without compression unpacks just the groups of values that hold each range.
    Objects of packed dtypes (bitmask) are decoded whole and sliced."""
    return _decoded_ranges(
        lambda asked: _tensorkit.tgm_decode_range(
            buf,
            _object_index(object_index),
            asked,
            native_byte_order=native_byte_order,
            restore_non_finite=restore_non_finite,
        ),
        lambda: decode_object(buf, object_index, native_byte_order, threads, restore_non_finite)[2],
        ranges,
        join,
    )


def _decoded_ranges(native: Any, whole: Any, ranges: Sequence[tuple[int, int]], join: bool) -> Any:
    """What ``decode_range`` returns, from ``native(ranges)`` (the native range decoder, or
    ``None`` for packed dtypes) and ``whole()`` (the object decoded whole, their fallback)."""
    parts = native(_asked(ranges))
    if parts is None:
        return _ranges(whole(), ranges, join)
    arrays = [array_of(p) for p in parts]
    if join:
        return np.concatenate(arrays)
    return arrays if len(ranges) else []


def _asked(ranges: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """``ranges`` as the native range decoders take them, checked; no ranges still asks for
    one empty range (the dtype of a joined empty result)."""
    for start, count in ranges:
        if start < 0 or count < 0:
            raise InvalidArgumentError(f"range ({start}, {count}) is outside the object")
    return [(int(s), int(c)) for s, c in ranges] or [(0, 0)]


def scan(buf: Any) -> list[tuple[int, int]]:
    """Where the messages in ``buf`` are: ``(offset, length)`` of each, in order. Damaged
    messages and bytes between messages are skipped."""
    return _tensorkit.tgm_scan(buf)


class _Remaining(Iterator[Message]):
    """Messages decoded one after another: an iterator whose ``len`` is how many are left."""

    __slots__ = ("_count", "_decode", "_next")

    def __init__(self, count: int, decode_one: Any):
        self._count = count
        self._decode = decode_one
        self._next = 0

    def __next__(self) -> Message:
        if self._next >= self._count:
            raise StopIteration
        i = self._next
        self._next += 1
        return self._decode(i)

    def __len__(self) -> int:
        return self._count - self._next

    def __repr__(self) -> str:
        return f"<message iterator: {len(self)} of {self._count} left>"


def iter_messages(buf: Any, *, verify_hash: bool = False) -> Iterator[Message]:
    """Decodes the messages in ``buf`` one after another (without copying ``buf``); the
    iterator's ``len`` is how many are left."""
    view = memoryview(buf).cast("B")
    spans = scan(view)
    return _Remaining(len(spans), lambda i: decode(view[spans[i][0] : sum(spans[i])], verify_hash=verify_hash))


def validate(buf: Any, level: str = "default", check_canonical: bool = False) -> dict[str, Any]:
    """Checks one message. ``level``: ``quick`` (structure), ``default`` (also metadata and
    hashes), ``checksum`` (the same, errors only), ``full`` (also decodes every object and
    looks for NaN/Inf). Returns ``{"issues": [...], "object_count": n, "hash_verified":
    bool}``; each issue has ``code``, ``level``, ``severity``, ``description`` and, where
    known, ``object_index`` and ``byte_offset``."""
    return _tensorkit.tgm_validate(buf, level, check_canonical)


def validate_file(path: str | os.PathLike[str], level: str = "default", check_canonical: bool = False) -> dict[str, Any]:
    """Checks every message of a ``.tgm`` file: ``{"file_issues": [...], "messages":
    [report per message]}``; file issues are bytes no message claims (``byte_offset``,
    ``length``, ``description``)."""
    return _tensorkit.tgm_validate_file(os.fspath(path), level, check_canonical)


def doctor() -> dict[str, Any]:
    """What this build is and can do, as tensogram's ``doctor()`` reports it: ``build``
    (version, wire version, target, profile), ``features`` (each compression codec, threads,
    remote reads and the GRIB converter: ``on`` with its backend and linkage, or ``off``) and
    ``self_test`` (a round trip through every codec it has; ``tensorkit doctor`` prints the
    same with the formats it reads)."""
    return _tensorkit.tgm_doctor()


def compute_hash(data: Any, algo: str = "xxh3") -> str:
    """The hash Tensogram stores, as 16 hex digits, of ``data``: ``bytes`` or ``bytearray``
    (as tensogram takes it: an array's bytes are asked for with ``.tobytes()``, so that
    which bytes are hashed is never in doubt)."""
    if not isinstance(data, (bytes, bytearray)):
        raise TypeError(f"compute_hash takes bytes or bytearray, not {type(data).__name__} (use .tobytes())")
    if algo != "xxh3":
        raise InvalidArgumentError(f"unknown hash type {algo!r}: only 'xxh3'")
    return f"{_tensorkit.tgm_hash(data):016x}"


def compute_packing_params(values: Any, bits_per_value: int, decimal_scale_factor: int = 0) -> dict[str, Any]:
    """The simple-packing parameters the encoder derives for ``values`` (float64; NaN and
    infinities refused) at ``bits_per_value`` bits and decimal scale
    ``decimal_scale_factor``, as descriptor keys: ``sp_reference_value``,
    ``sp_binary_scale_factor``, ``sp_decimal_scale_factor``, ``sp_bits_per_value`` — to spread
    into a descriptor whose ``encoding`` is ``simple_packing`` (the encoder derives them itself
    from ``sp_bits_per_value`` alone; pinning them keeps them fixed across messages)."""
    arr = np.ascontiguousarray(np.asarray(values, dtype=np.float64)).reshape(-1)
    reference, binary = _tensorkit.tgm_packing_params(arr.view(np.uint8), int(bits_per_value), int(decimal_scale_factor))
    return {
        "sp_reference_value": reference,
        "sp_binary_scale_factor": binary,
        "sp_decimal_scale_factor": int(decimal_scale_factor),
        "sp_bits_per_value": int(bits_per_value),
    }
