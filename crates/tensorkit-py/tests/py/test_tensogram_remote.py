"""``tensorkit.tensogram.TensogramFile`` and ``AsyncTensogramFile`` over URLs: read by byte
ranges from an HTTP server on 127.0.0.1 (conftest's ``served``), checked against the same
file read locally and against tensogram 0.24's own remote reader."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
import tensogram as reference

from tensorkit import tensogram


def _descriptor(n: int, **pipeline: object) -> dict[str, object]:
    return {"type": "ntensor", "shape": [n], "dtype": "float32", **pipeline}


def _write(path, messages: int = 3, objects: int = 2, n: int = 50_000) -> list[list[np.ndarray]]:
    """A file of ``messages`` messages of ``objects`` float32 objects each (the second one
    zstd-compressed), every object's values distinct; returns the values."""
    values = []
    with tensogram.TensogramFile.create(path) as f:
        for m in range(messages):
            arrays = [np.arange(n, dtype=np.float32) + 1000 * m + 100 * j for j in range(objects)]
            pairs = [
                (_descriptor(n, compression="zstd" if j % 2 else "none"), a) for j, a in enumerate(arrays)
            ]
            f.append({"base": [{"step": m, "j": j} for j in range(objects)]}, pairs)
            values.append(arrays)
    return values


def test_a_url_opens_reading_headers_only_and_decodes_one_frame_per_object(served):
    root, base, handler = served
    values = _write(root / "f.tgm")
    size = (root / "f.tgm").stat().st_size
    with tensogram.TensogramFile.open(f"{base}/f.tgm") as f:
        assert f.is_remote() and f.source() == f"{base}/f.tgm"
        assert f.message_count() == 3
        opened = len(handler.requests)
        assert opened <= 4, handler.requests
        meta = f.file_decode_metadata(1)
        assert meta.base[0]["step"] == 1
        assert len(handler.requests) == opened, "metadata is read from the headers held"
        out = f.file_decode_object(2, 1)
        np.testing.assert_array_equal(out["data"], values[2][1])
        assert out["descriptor"].compression == "zstd"
        assert len(handler.requests) == opened + 1
        # The one request asked for that frame, not the message or the file.
        first, last = (int(x) for x in handler.requests[-1].removeprefix("bytes=").split("-"))
        assert last - first + 1 < size // 4
        meta, objects = f.decode_message(0)
        assert [o[1].tolist() for o in objects] == [v.tolist() for v in values[0]]
        assert f.read_message(1) == (root / "f.tgm").read_bytes()[slice(*_span(f, 1))]
        d = f.file_decode_descriptors(2)
        assert [x.compression for x in d["descriptors"]] == ["none", "zstd"]
        part = f.file_decode_range(1, 1, [(10, 5), (49_990, 10)])
        np.testing.assert_array_equal(part[0], values[1][1][10:15])
        np.testing.assert_array_equal(part[1], values[1][1][49_990:])


def _span(f: tensogram.TensogramFile, i: int) -> tuple[int, int]:
    offset, length = f._file().ranges()[i]
    return offset, offset + length


def test_a_batch_fetches_its_frames_together(served):
    root, base, handler = served
    values = _write(root / "f.tgm", messages=4, objects=1, n=20_000)
    f = tensogram.TensogramFile.open(f"{base}/f.tgm")
    before = len(handler.requests)
    batch = f.file_decode_object_batch([3, 0, 2], 0)
    # Messages 2 and 3 are neighbours: their frames are one request; message 0's another.
    assert len(handler.requests) == before + 2, handler.requests[before:]
    for got, m in zip(batch, [3, 0, 2]):
        np.testing.assert_array_equal(got["data"], values[m][0])
        assert got["metadata"].base[0]["step"] == m
    ranges = f.file_decode_range_batch([1, 2], 0, [(2, 3)], join=True)
    np.testing.assert_array_equal(ranges[1], values[2][0][2:5])
    assert len(handler.requests) == before + 3
    assert f.file_decode_object_batch([], 0) == []


def test_local_files_decode_batches_too(tmp_path):
    values = _write(tmp_path / "f.tgm", objects=1, n=100)
    f = tensogram.TensogramFile.open(tmp_path / "f.tgm")
    got = f.file_decode_object_batch([2, 1], 0)
    np.testing.assert_array_equal(got[0]["data"], values[2][0])
    assert [r.tolist() for r in f.file_decode_range_batch([0], 0, [(1, 2)])[0]] == [[1.0, 2.0]]


def test_file_urls_are_local_files(tmp_path):
    values = _write(tmp_path / "f.tgm", messages=1, objects=1, n=10)
    f = tensogram.TensogramFile.open((tmp_path / "f.tgm").as_uri())
    assert not f.is_remote()
    np.testing.assert_array_equal(f.file_decode_object(0, 0)["data"], values[0][0])


def test_remote_reads_match_tensogram_s_own_remote_reader(served):
    root, base, _ = served
    _write(root / "f.tgm", n=1000)
    ours = tensogram.TensogramFile.open(f"{base}/f.tgm")
    theirs = reference.TensogramFile.open_remote(f"{base}/f.tgm", {"allow_http": "true"})
    assert ours.message_count() == theirs.message_count()
    for m in range(theirs.message_count()):
        assert ours.read_message(m) == theirs.read_message(m)
        assert ours.file_decode_metadata(m).base == theirs.file_decode_metadata(m).base
        for j in range(2):
            np.testing.assert_array_equal(
                ours.file_decode_object(m, j)["data"], theirs.file_decode_object(m, j)["data"]
            )


def test_remote_files_refuse_what_would_be_a_round_trip_each_or_a_write(served):
    root, base, _ = served
    _write(root / "f.tgm", messages=1, n=10)
    f = tensogram.TensogramFile.open(f"{base}/f.tgm")
    with pytest.raises(RuntimeError, match="iteration not supported"):
        iter(f)
    with pytest.raises(OSError, match="read-only"):
        f.append({}, [(_descriptor(1), np.zeros(1, np.float32))])
    with pytest.raises(IndexError):
        f[5]
    with pytest.raises(ValueError, match="out of range"):
        f.file_decode_object(7, 0)
    with pytest.raises(ValueError, match="object"):
        f.file_decode_object(0, 9)


def test_bad_urls_and_options_fail_clearly(served):
    root, base, _ = served
    _write(root / "f.tgm", messages=1, n=10)
    with pytest.raises(OSError, match="404|not found|Not Found"):
        tensogram.TensogramFile.open(f"{base}/missing.tgm")
    with pytest.raises(OSError):
        tensogram.TensogramFile.open("http://[invalid]/f.tgm")

    class Unprintable:
        def __str__(self):
            raise RuntimeError("no")

    with pytest.raises(ValueError, match="convertible to string"):
        tensogram.TensogramFile.open_remote(f"{base}/f.tgm", {"allow_http": Unprintable()})
    with pytest.raises(TypeError):
        tensogram.TensogramFile.open_remote(f"{base}/f.tgm", bidirectional="yes")


def test_a_damaged_frame_fetched_alone_is_found(served):
    root, base, _ = served
    _write(root / "f.tgm", messages=2, objects=1, n=1000)
    data = bytearray((root / "f.tgm").read_bytes())
    second = data.index(b"TENSOGRM", 8)
    data[second - 2000] ^= 0xFF  # inside the first message's only object's payload
    (root / "f.tgm").write_bytes(bytes(data))
    f = tensogram.TensogramFile.open(f"{base}/f.tgm")
    with pytest.raises(tensogram.HashMismatchError, match="hash mismatch"):
        f.file_decode_object(0, 0, verify_hash=True)
    np.testing.assert_array_equal(f.file_decode_object(1, 0)["data"], np.arange(1000, dtype=np.float32) + 1000)


def test_async_files_gather_iterate_and_check_arguments_eagerly(served, tmp_path):
    root, base, _ = served
    values = _write(root / "f.tgm", n=100)

    async def run() -> None:
        for source in (f"{base}/f.tgm", str(root / "f.tgm")):
            f = await tensogram.AsyncTensogramFile.open(source)
            assert f.is_remote() == source.startswith("http")
            with pytest.raises(RuntimeError, match="message_count"):
                len(f)
            assert await f.message_count() == 3 and len(f) == 3
            got = await asyncio.gather(*(f.file_decode_object(m, 1) for m in range(3)))
            for m, out in enumerate(got):
                np.testing.assert_array_equal(out["data"], values[m][1])
            seen = [meta.base[0]["step"] async for meta, _ in f]
            assert seen == [0, 1, 2]
            it = f.__aiter__()
            await it.__anext__()
            assert repr(it) == "AsyncTensogramFileIter(position=1, remaining=2)"
            batch = await f.file_decode_range_batch([0, 2], 0, [(0, 2)], join=True)
            assert [b.tolist() for b in batch] == [[0.0, 1.0], [2000.0, 2001.0]]
            await f.prefetch_layouts([0, 2])
            with pytest.raises(ValueError):
                await f.prefetch_layouts([3])
            async with f:
                pass
        with pytest.raises(OSError):
            await tensogram.AsyncTensogramFile.open(str(tmp_path / "missing.tgm"))

    asyncio.run(run())
    with pytest.raises(TypeError):
        tensogram.AsyncTensogramFile.open_remote(f"{base}/f.tgm", bidirectional=1)
