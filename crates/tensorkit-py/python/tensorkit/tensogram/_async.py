"""``AsyncTensogramFile``: ``TensogramFile`` for ``asyncio`` code.

Every method returns an awaitable; the work runs on a worker thread (tensorkit releases the
GIL while it reads, fetches and decodes), so that ``asyncio.gather`` over several calls
decodes and fetches them at once. Arguments are checked when the method is called, before
anything is awaited, as tensogram checks them.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

from ._codec import Message, Metadata
from ._file import TensogramFile, _bidirectional, _storage_options

T = TypeVar("T")


async def _off_loop(call: Callable[[], T]) -> T:
    return await asyncio.to_thread(call)


class AsyncTensogramFile:
    """A ``.tgm`` file, local or at a URL, for ``asyncio``.

    >>> f = await AsyncTensogramFile.open("https://example.com/forecast.tgm")  # doctest: +SKIP
    >>> n = await f.message_count()  # doctest: +SKIP
    >>> meta, objects = await f.decode_message(0)  # doctest: +SKIP
    """

    def __init__(self, file: TensogramFile):
        self._file = file
        self._count: int | None = None

    @staticmethod
    def open(source: str | os.PathLike[str], *, bidirectional: bool = True) -> Awaitable[AsyncTensogramFile]:
        """Opens ``source``, a local path or a URL (see ``TensogramFile.open``)."""
        _bidirectional(bidirectional)
        return _off_loop(lambda: AsyncTensogramFile(TensogramFile.open(source, bidirectional=bidirectional)))

    @staticmethod
    def open_remote(
        source: str, storage_options: Mapping[str, Any] | None = None, *, bidirectional: bool = True
    ) -> Awaitable[AsyncTensogramFile]:
        """Opens the object at ``source`` with the store's configuration keys
        ``storage_options`` (see ``TensogramFile.open_remote``)."""
        options = _storage_options(storage_options)
        _bidirectional(bidirectional)
        return _off_loop(
            lambda: AsyncTensogramFile(
                TensogramFile.open_remote(source, dict(options or ()), bidirectional=bidirectional)
            )
        )

    def source(self) -> str:
        """The path or URL it was opened from."""
        return self._file.source()

    def is_remote(self) -> bool:
        """Whether it is read from a URL."""
        return self._file.is_remote()

    async def message_count(self) -> int:
        """How many messages it holds (after which ``len()`` answers too)."""
        self._count = await _off_loop(self._file.message_count)
        return self._count

    def __len__(self) -> int:
        if self._count is None:
            raise RuntimeError("len() of an AsyncTensogramFile needs `await f.message_count()` first")
        return self._count

    async def prefetch_layouts(self, msg_indices: Sequence[int]) -> None:
        """Checks ``msg_indices``: tensorkit reads every message's layout (its headers and
        index) when the file opens, so there is nothing left to fetch ahead."""
        count = await _off_loop(self._file.message_count)
        for i in msg_indices:
            if not -count <= i < count:
                raise ValueError(f"message index {i} out of range for file with {count} messages")

    def decode_message(
        self,
        index: int,
        native_byte_order: bool = True,
        threads: int = 0,
        restore_non_finite: bool = True,
        verify_hash: bool = False,
    ) -> Awaitable[Message]:
        return _off_loop(
            lambda: self._file.decode_message(index, native_byte_order, threads, restore_non_finite, verify_hash)
        )

    def file_decode_metadata(self, msg_index: int) -> Awaitable[Metadata]:
        return _off_loop(lambda: self._file.file_decode_metadata(msg_index))

    def file_decode_descriptors(self, msg_index: int) -> Awaitable[dict[str, Any]]:
        return _off_loop(lambda: self._file.file_decode_descriptors(msg_index))

    def file_decode_object(
        self,
        msg_index: int,
        obj_index: int,
        native_byte_order: bool = True,
        threads: int = 0,
        restore_non_finite: bool = True,
        verify_hash: bool = False,
    ) -> Awaitable[dict[str, Any]]:
        return _off_loop(
            lambda: self._file.file_decode_object(
                msg_index, obj_index, native_byte_order, threads, restore_non_finite, verify_hash
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
    ) -> Awaitable[list[np.ndarray] | np.ndarray]:
        return _off_loop(
            lambda: self._file.file_decode_range(
                msg_index, obj_index, ranges, join, native_byte_order, threads, restore_non_finite
            )
        )

    def file_decode_object_batch(
        self,
        msg_indices: Sequence[int],
        obj_index: int,
        native_byte_order: bool = True,
        threads: int = 0,
        verify_hash: bool = False,
    ) -> Awaitable[list[dict[str, Any]]]:
        return _off_loop(
            lambda: self._file.file_decode_object_batch(msg_indices, obj_index, native_byte_order, threads, verify_hash)
        )

    def file_decode_range_batch(
        self,
        msg_indices: Sequence[int],
        obj_index: int,
        ranges: Sequence[tuple[int, int]],
        join: bool = False,
        native_byte_order: bool = True,
        threads: int = 0,
    ) -> Awaitable[list[list[np.ndarray] | np.ndarray]]:
        return _off_loop(
            lambda: self._file.file_decode_range_batch(msg_indices, obj_index, ranges, join, native_byte_order, threads)
        )

    def read_message(self, index: int) -> Awaitable[bytes]:
        return _off_loop(lambda: self._file.read_message(index))

    def messages(self) -> Awaitable[list[bytes]]:
        return _off_loop(self._file.messages)

    def __aiter__(self) -> AsyncTensogramFileIter:
        return AsyncTensogramFileIter(self, self._count)

    async def close(self) -> None:
        self._file.close()

    async def __aenter__(self) -> AsyncTensogramFile:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._file.close()

    def __repr__(self) -> str:
        where = "remote" if self.is_remote() else "local"
        return f"AsyncTensogramFile(source={self.source()!r}, {where})"


class AsyncTensogramFileIter(AsyncIterator[Message]):
    """Decodes the messages of an ``AsyncTensogramFile`` in order, one per ``__anext__``.
    Each iterator keeps its own position."""

    def __init__(self, file: AsyncTensogramFile, count: int | None):
        self._file = file
        self._count = count
        self._position = 0

    def __aiter__(self) -> AsyncTensogramFileIter:
        return self

    async def __anext__(self) -> Message:
        if self._count is None:
            self._count = await self._file.message_count()
        if self._position >= self._count:
            raise StopAsyncIteration
        i = self._position
        self._position += 1
        return await self._file.decode_message(i)

    def __len__(self) -> int:
        if self._count is None:
            raise RuntimeError("len() of the iterator needs `await f.message_count()` first")
        return self._count - self._position

    def __repr__(self) -> str:
        remaining = "?" if self._count is None else self._count - self._position
        return f"AsyncTensogramFileIter(position={self._position}, remaining={remaining})"
