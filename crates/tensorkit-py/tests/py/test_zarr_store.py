"""tensorkit.zarr.Store: a read-only Zarr v3 store over Tensogram files, under zarr's own
StoreTests (the cases that write are overridden: they must be refused), and through zarr
and xarray."""

import json
import pickle

import numpy as np
import pytest

import tensorkit

zarr = pytest.importorskip("zarr")
from zarr.abc.store import OffsetByteRequest, RangeByteRequest, SuffixByteRequest  # noqa: E402
from zarr.core.buffer import cpu, default_buffer_prototype  # noqa: E402
from zarr.core.sync import _collect_aiterator  # noqa: E402
from zarr.testing.store import StoreTests  # noqa: E402

from tensorkit.zarr import Store  # noqa: E402

READ_ONLY = "store was opened in read-only mode and does not support writing"
A = np.arange(12.0).reshape(3, 4)
B = np.arange(5, dtype=np.int32)


@pytest.fixture
def tgm(tmp_path):
    path = tmp_path / "x.tgm"
    tensorkit.save(path, {"a": A, "b/c": B}, metadata={"source": "test"})
    return path


def proto():
    return default_buffer_prototype()


class TestTensogramStore(StoreTests[Store, cpu.Buffer]):
    store_cls = Store
    buffer_cls = cpu.Buffer

    @pytest.fixture
    def store_kwargs(self, tgm):
        return {"path": str(tgm), "read_only": True}

    async def set(self, store, key, value):
        raise AssertionError("a read-only store is never written to")

    async def get(self, store, key):
        return await store.get(key, prototype=proto())

    def test_store_repr(self, store):
        assert repr(store).startswith("tensorkit.zarr.Store([")

    def test_store_supports_writes(self, store):
        assert not store.supports_writes and not store.supports_deletes

    def test_store_supports_listing(self, store):
        assert store.supports_listing

    def test_store_read_only(self, store):
        assert store.read_only
        with pytest.raises(AttributeError):
            store.read_only = False

    @pytest.mark.parametrize("read_only", [True, False])
    async def test_store_open_read_only(self, open_kwargs, read_only):
        open_kwargs["read_only"] = read_only
        if not read_only:
            with pytest.raises(tensorkit.UnsupportedError, match="not a file a ChunkedStore wrote"):
                await self.store_cls.open(**open_kwargs)
            return
        store = await self.store_cls.open(**open_kwargs)
        assert store._is_open and store.read_only

    async def test_serializable_store(self, store):
        back = pickle.loads(pickle.dumps(store))
        assert back == store and back.read_only
        assert (await back.get("a/c/0/0", prototype=proto())).to_bytes() == A.tobytes()

    @pytest.mark.parametrize("key", ["zarr.json", "a/zarr.json", "a/c/0/0", "b%2Fc/c/0"])
    @pytest.mark.parametrize(
        "byte_range", [None, RangeByteRequest(1, 4), OffsetByteRequest(3), SuffixByteRequest(5), SuffixByteRequest(0)]
    )
    async def test_get(self, store, key, byte_range):
        whole = (await store.get(key, prototype=proto())).to_bytes()
        got = (await store.get(key, prototype=proto(), byte_range=byte_range)).to_bytes()
        if byte_range is None:
            expected = whole
        elif isinstance(byte_range, RangeByteRequest):
            expected = whole[byte_range.start : byte_range.end]
        elif isinstance(byte_range, OffsetByteRequest):
            expected = whole[byte_range.offset :]
        else:
            expected = whole[len(whole) - byte_range.suffix :] if byte_range.suffix else b""
        assert got == expected
        if key == "a/c/0/0":
            assert whole == A.astype("<f8").tobytes()
        if key == "b%2Fc/c/0":
            assert whole == B.astype("<i4").tobytes()

    async def test_get_not_open(self, store_not_open):
        assert not store_not_open._is_open
        assert (await store_not_open.get("a/c/0/0", prototype=proto())).to_bytes() == A.tobytes()

    async def test_get_raises(self, store):
        with pytest.raises((ValueError, TypeError), match=r"Unexpected byte_range, got.*"):
            await store.get("a/c/0/0", prototype=proto(), byte_range=(0, 2))

    async def test_get_many(self, store):
        keys = ["zarr.json", "a/c/0/0", "b%2Fc/c/0", "missing"]
        got = await _collect_aiterator(store._get_many(zip(keys, [proto()] * 4, [None] * 4)))
        got = dict((k, b.to_bytes() if b is not None else None) for k, b in got)
        assert got["a/c/0/0"] == A.tobytes() and got["missing"] is None

    @pytest.mark.parametrize("key", ["a/c/0/0", "b%2Fc/c/0"])
    async def test_getsize(self, store, key):
        assert await store.getsize(key) == {"a/c/0/0": A.nbytes, "b%2Fc/c/0": B.nbytes}[key]

    async def test_getsize_prefix(self, store):
        meta = len((await store.get("a/zarr.json", prototype=proto())).to_bytes())
        assert await store.getsize_prefix("a") == A.nbytes + meta

    @pytest.mark.parametrize("key", ["zarr.json", "c/0", "a/c/0/0"])
    async def test_set(self, store, key):
        with pytest.raises(ValueError, match=READ_ONLY):
            await store.set(key, self.buffer_cls.from_bytes(b"\\x01"))

    async def test_set_not_open(self, store_not_open):
        with pytest.raises(ValueError, match=READ_ONLY):
            await store_not_open.set("c/0", self.buffer_cls.from_bytes(b"\\x01"))

    async def test_set_many(self, store):
        with pytest.raises(ValueError, match=READ_ONLY):
            await store._set_many([("c/0", self.buffer_cls.from_bytes(b"\\x01"))])

    async def test_set_if_not_exists(self, store):
        with pytest.raises(ValueError, match=READ_ONLY):
            await store.set_if_not_exists("new", self.buffer_cls.from_bytes(b"\\x01"))

    async def test_get_partial_values(self, store):
        got = await store.get_partial_values(
            proto(), [("a/c/0/0", RangeByteRequest(0, 8)), ("a/c/0/0", SuffixByteRequest(8)), ("nope", None)]
        )
        assert got[0].to_bytes() == A.tobytes()[:8] and got[1].to_bytes() == A.tobytes()[-8:] and got[2] is None

    async def test_exists(self, store):
        assert await store.exists("a/zarr.json") and await store.exists("zarr.json")
        assert not await store.exists("a") and not await store.exists("c/0")

    async def test_delete(self, store):
        with pytest.raises(ValueError, match=READ_ONLY):
            await store.delete("a/c/0/0")
        assert await store.exists("a/c/0/0")

    async def test_delete_dir(self, store):
        with pytest.raises((ValueError, NotImplementedError)):
            await store.delete_dir("a")
        assert await store.exists("a/c/0/0")

    async def test_delete_nonexistent_key_does_not_raise(self, store):
        # A read-only store refuses every delete, whatever the key.
        with pytest.raises(ValueError, match=READ_ONLY):
            await store.delete("nope")

    async def test_is_empty(self, store):
        assert not await store.is_empty("")
        assert not await store.is_empty("a")
        assert await store.is_empty("nope")

    async def test_clear(self, store):
        with pytest.raises(NotImplementedError):
            await store.clear()
        assert await store.exists("zarr.json")

    async def test_list(self, store):
        keys = sorted(await _collect_aiterator(store.list()))
        assert keys == ["a/c/0/0", "a/zarr.json", "b%2Fc/c/0", "b%2Fc/zarr.json", "zarr.json"]

    async def test_list_prefix(self, store):
        assert sorted(await _collect_aiterator(store.list_prefix("a/"))) == ["a/c/0/0", "a/zarr.json"]
        assert sorted(await _collect_aiterator(store.list_prefix(""))) == sorted(await _collect_aiterator(store.list()))

    async def test_list_empty_path(self, store):
        assert sorted(await _collect_aiterator(store.list_dir(""))) == ["a", "b%2Fc", "zarr.json"]

    async def test_list_dir(self, store):
        assert sorted(await _collect_aiterator(store.list_dir("a"))) == ["c", "zarr.json"]
        assert sorted(await _collect_aiterator(store.list_dir("a/c/"))) == ["0"]
        assert list(await _collect_aiterator(store.list_dir("nope"))) == []

    async def test_get_bytes(self, store):
        assert json.loads(await store._get_bytes("zarr.json", prototype=proto()))["node_type"] == "group"

    def test_get_bytes_sync(self, store):
        assert json.loads(store._get_bytes_sync("zarr.json", prototype=proto()))["attributes"] == {"source": "test"}

    async def test_get_json(self, store):
        assert (await store._get_json("a/zarr.json", prototype=proto()))["shape"] == [3, 4]

    def test_get_json_sync(self, store):
        assert store._get_json_sync("b%2Fc/zarr.json", prototype=proto())["data_type"] == "int32"


def test_zarr_and_xarray_read_it(tmp_path, tgm):
    xr = pytest.importorskip("xarray")
    g = zarr.open_group(Store(tgm), mode="r")
    assert g.attrs["source"] == "test"
    np.testing.assert_array_equal(g["a"][:], A)
    np.testing.assert_array_equal(g["a"][1:, 2], A[1:, 2])
    ds = xr.open_zarr(Store(tgm), consolidated=False, zarr_format=3)
    np.testing.assert_array_equal(ds["a"].values, A)
    with pytest.raises(tensorkit.UnsupportedError, match="appends only to files it wrote"):
        Store(tgm, read_only=False)


def test_several_files_every_message_as_one_store(tmp_path):
    paths = []
    for i in range(2):
        p = tmp_path / f"day{i}.tgm"
        tensorkit.save(p, {f"t{i}": np.full((2, 2), float(i))})
        paths.append(p)
    # A second message appended to the first file is served too.
    from tensorkit import tensogram

    extra = tensogram.encode({"base": [{"name": "extra"}]}, [({"type": "ntensor"}, np.ones(3))])
    with open(paths[0], "ab") as f:
        f.write(extra)
    g = zarr.open_group(Store(paths), mode="r")
    assert sorted(g.array_keys()) == ["extra", "t0", "t1"]
    np.testing.assert_array_equal(g["t1"][:], np.full((2, 2), 1.0))
    np.testing.assert_array_equal(g["extra"][:], np.ones(3))


def test_a_remote_file_is_served_lazily(served):
    root, base, handler = served
    tensorkit.save(root / "r.tgm", {"a": A, "big": np.arange(200_000, dtype=np.float64)})
    store = Store(f"{base}/r.tgm")
    g = zarr.open_group(store, mode="r")
    before = len(handler.requests)
    np.testing.assert_array_equal(g["a"][:], A)
    # That array's chunk is fetched, not the 1.6 MB file.
    fetched = handler.requests[before:]
    spans = [tuple(int(x) for x in r.removeprefix("bytes=").split("-")) for r in fetched]
    assert fetched and sum(b - a + 1 for a, b in spans) < 200_000, fetched
    assert pickle.loads(pickle.dumps(store)) == store
    np.testing.assert_array_equal(g["big"][:], np.arange(200_000, dtype=np.float64))


def test_dimension_names_are_the_xarray_engine_s(tmp_path):
    xr = pytest.importorskip("xarray")
    path = tmp_path / "d.tgm"
    # Two shapes without names (dim_0 would have two sizes), and a coordinate named like a
    # dimension of another tensor.
    from tensorkit import tensogram

    path.write_bytes(tensogram.encode(
        {"base": [{"name": "t", "dim_names": ["lat", "lon"]}, {"name": "lat"}, {"name": "a"}, {"name": "b"}]},
        [({"type": "ntensor"}, np.zeros((3, 4))), ({"type": "ntensor"}, np.arange(3.0)),
         ({"type": "ntensor"}, np.zeros(5)), ({"type": "ntensor"}, np.zeros((2, 2)))],
    ))
    engine = xr.open_dataset(path, engine="tensorkit")
    store = xr.open_zarr(Store(path), consolidated=False, zarr_format=3)
    for v in ("t", "lat", "a", "b"):
        assert store[v].dims == engine[v].dims, v
    assert store["b"].dims == ("b_dim_0", "b_dim_1") and store["lat"].dims == ("lat",)
