"""``TensogramFile``: a ``.tgm`` file on disk (mapped) or at a URL (read by byte ranges)."""

from __future__ import annotations

import os
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from .. import _tensorkit
from ._codec import (
    DataObjectDescriptor,
    Message,
    Metadata,
    _asked,
    _decoded_ranges,
    _message,
    _metadata,
    _object_index,
    _Remaining,
    encode,
)


def _object_result(native: Any) -> dict[str, Any]:
    """A message decoded with one object, as ``file_decode_object`` returns it."""
    meta, [(d, arr)] = _message(native)
    return {"metadata": meta, "descriptor": d, "data": arr}


class MessageIndexError(IndexError, ValueError):
    """A message index beyond the file: an ``IndexError`` as sequences raise, and the
    ``ValueError`` tensogram raises."""


def _storage_options(options: Mapping[str, Any] | None) -> list[tuple[str, str]] | None:
    """``storage_options`` as the store's configuration keys and values, all strings."""
    if options is None:
        return None
    if not isinstance(options, Mapping):
        raise TypeError(f"storage_options must be a dict, not {type(options).__name__}")
    out = []
    for key, value in options.items():
        try:
            out.append((str(key), str(value)))
        except Exception as e:
            raise ValueError(f"storage option {key!r}: its value must be convertible to string ({e})") from e
    return out


def _bidirectional(value: Any) -> bool:
    """``bidirectional`` checked as tensogram checks it: a ``bool``, nothing else."""
    if not isinstance(value, bool):
        raise TypeError(f"bidirectional must be a bool, not {type(value).__name__}")
    return value


class TensogramFile:
    """A ``.tgm`` file: ``open`` maps a local file, or reads one at a URL (``https://``,
    ``s3://``, ``gs://``, ``az://``) by byte ranges, and finds its messages; ``create``
    starts a new local one that ``append`` adds messages to. Indexing and iteration decode
    messages.

    >>> with TensogramFile.open("forecast.tgm") as f:  # doctest: +SKIP
    ...     meta, objects = f.decode_message(0)
    """

    def __init__(self, path: str, native: Any = None, *, remote: bool = False):
        self._path = path
        self._native = native
        self._remote = remote
        self._closed = False

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, bidirectional: bool = True) -> TensogramFile:
        """Opens ``path``: a local file, or a URL (as ``open_remote`` with no options).

        ``bidirectional`` is accepted as tensogram accepts it; tensorkit's remote walk reads
        every message's headers in as few round trips as the file's indexes allow, either way.
        """
        _bidirectional(bidirectional)
        p = os.fspath(path)
        if p.startswith("file://"):
            p = urllib.request.url2pathname(urllib.parse.urlparse(p).path)
        elif _tensorkit.is_url(p):
            return cls.open_remote(p, bidirectional=bidirectional)
        return cls(p, _tensorkit.TgmFile(p))

    @classmethod
    def open_remote(
        cls, url: str, storage_options: Mapping[str, Any] | None = None, *, bidirectional: bool = True
    ) -> TensogramFile:
        """Opens the ``.tgm`` object at ``url``, read by byte ranges: every message's headers
        now, each object's frame when it is decoded. ``storage_options`` are the store's
        configuration keys (``{"aws_region": "eu-west-1"}``, ``{"allow_http": "true"}``).
        """
        options = _storage_options(storage_options)
        _bidirectional(bidirectional)
        return cls(url, _tensorkit.RemoteTgm(url, options), remote=True)

    @classmethod
    def create(cls, path: str | os.PathLike[str]) -> TensogramFile:
        """A new, empty file at ``path`` (an existing one is truncated)."""
        p = os.fspath(path)
        with open(p, "wb"):
            pass
        return cls(p)

    def append(
        self,
        global_meta_dict: Mapping[str, Any] | None,
        descriptors_and_data: Sequence[tuple[Mapping[str, Any], Any]],
        hash: str | None = "xxh3",
        *,
        fsync: bool = False,
        **options: Any,
    ) -> None:
        """Encodes one message (as ``encode`` does) and appends it.

        The kernel writes it to disk in its own time, as tensogram's own ``append`` leaves
        it; ``fsync=True`` syncs it to disk before returning.
        """
        message = encode(global_meta_dict, descriptors_and_data, hash=hash, **options, _stacklevel=3)
        self._check_open()
        if self._remote:
            raise OSError(f"{self._path}: a remote file is read-only")
        _tensorkit.tgm_append(self._path, message, fsync=fsync)
        if self._native is not None:
            self._native.close()
            self._native = None

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError("I/O operation on a closed file")

    def _file(self) -> Any:
        self._check_open()
        if self._native is None:
            self._native = _tensorkit.TgmFile(self._path)
        return self._native

    def _index(self, index: int) -> int:
        n = len(self._file())
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise MessageIndexError(f"message index {index} out of range for file with {n} messages")
        return index

    def __len__(self) -> int:
        return len(self._file())

    def message_count(self) -> int:
        """How many messages the file holds."""
        return len(self)

    def source(self) -> str:
        return self._path

    def is_remote(self) -> bool:
        """Whether it is read from a URL."""
        return self._remote

    def decode_message(
        self,
        index: int,
        native_byte_order: bool = True,
        threads: int = 0,
        restore_non_finite: bool = True,
        verify_hash: bool = False,
    ) -> Message:
        """Decodes message ``index``: ``Message(metadata, objects)``."""
        return _message(
            self._file().decode(
                self._index(index),
                verify_hash=verify_hash,
                native_byte_order=native_byte_order,
                restore_non_finite=restore_non_finite,
                threads=threads,
            )
        )

    def __getitem__(self, index: int | slice) -> Message | list[Message]:
        if isinstance(index, slice):
            return [self.decode_message(i) for i in range(*index.indices(len(self)))]
        return self.decode_message(index)

    def __iter__(self) -> Iterator[Message]:
        if self._remote:
            raise RuntimeError(
                "iteration not supported on a remote file (each message would be a round trip): "
                "decode_message(i), file_decode_object_batch or AsyncTensogramFile"
            )
        return _Remaining(len(self), self.decode_message)

    def read_message(self, index: int) -> bytes:
        """The bytes of message ``index``."""
        return self._file().message(self._index(index))

    def messages(self) -> list[bytes]:
        """The bytes of every message."""
        f = self._file()
        return [f.message(i) for i in range(len(f))]

    def file_decode_metadata(self, msg_index: int) -> Metadata:
        return _metadata(self._file().metadata(self._index(msg_index)))

    def file_decode_descriptors(self, msg_index: int) -> dict[str, Any]:
        described = self._file().describe(self._index(msg_index))
        return {
            "metadata": _metadata(described.metadata),
            "descriptors": [DataObjectDescriptor(d) for d in described.descriptors],
        }

    def file_decode_object(
        self,
        msg_index: int,
        obj_index: int,
        native_byte_order: bool = True,
        threads: int = 0,
        restore_non_finite: bool = True,
        verify_hash: bool = False,
    ) -> dict[str, Any]:
        return _object_result(
            self._file().decode(
                self._index(msg_index),
                index=_object_index(obj_index),
                verify_hash=verify_hash,
                native_byte_order=native_byte_order,
                restore_non_finite=restore_non_finite,
                threads=threads,
            )
        )

    def file_decode_range(
        self,
        msg_index: int,
        obj_index: int,
        ranges: Sequence[tuple[int, int]],
        join: bool = False,
        native_byte_order: bool = True,
        threads: int = 0,
        restore_non_finite: bool = True,
    ) -> list[np.ndarray] | np.ndarray:
        return _decoded_ranges(
            lambda asked: self._file().decode_range(
                self._index(msg_index),
                _object_index(obj_index),
                asked,
                native_byte_order=native_byte_order,
                restore_non_finite=restore_non_finite,
            ),
            lambda: self.file_decode_object(msg_index, obj_index, native_byte_order, threads, restore_non_finite)["data"],
            ranges,
            join,
        )

    def file_decode_object_batch(
        self,
        msg_indices: Sequence[int],
        obj_index: int,
        native_byte_order: bool = True,
        threads: int = 0,
        verify_hash: bool = False,
    ) -> list[dict[str, Any]]:
        """``file_decode_object(i, obj_index)`` for each message of ``msg_indices``: from a
        URL, the objects' frames are fetched together (neighbours in one request, the rest
        concurrently). Local files are decoded from the map (tensogram reads only remote
        files this way).
        """
        indices = [self._index(i) for i in msg_indices]
        if not self._remote or verify_hash:
            return [self.file_decode_object(i, obj_index, native_byte_order, threads, verify_hash=verify_hash) for i in indices]
        decoded = self._file().decode_batch(
            indices, _object_index(obj_index), native_byte_order=native_byte_order, threads=threads
        )
        return [_object_result(native) for native in decoded]

    def file_decode_range_batch(
        self,
        msg_indices: Sequence[int],
        obj_index: int,
        ranges: Sequence[tuple[int, int]],
        join: bool = False,
        native_byte_order: bool = True,
        threads: int = 0,
    ) -> list[list[np.ndarray] | np.ndarray]:
        """``file_decode_range(i, obj_index, ranges, join)`` for each message of
        ``msg_indices``: from a URL, the objects' frames are fetched together."""
        indices = [self._index(i) for i in msg_indices]
        if not self._remote:
            return [self.file_decode_range(i, obj_index, ranges, join, native_byte_order, threads) for i in indices]
        decoded = self._file().decode_range_batch(
            indices, _object_index(obj_index), _asked(ranges), native_byte_order=native_byte_order
        )
        return [
            _decoded_ranges(
                lambda _asked, d=d: d,
                lambda i=i: self.file_decode_object(i, obj_index, native_byte_order, threads)["data"],
                ranges,
                join,
            )
            for i, d in zip(indices, decoded)
        ]

    def close(self) -> None:
        """Unmaps the file; arrays decoded from it stay valid."""
        if self._native is not None:
            self._native.close()
            self._native = None
        self._closed = True

    def __enter__(self) -> TensogramFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"TensogramFile(source={self._path!r})"
