"""Writing Tensogram files through Zarr: ``tensorkit.zarr.Store(path, mode="w" | "a")`` under
zarr-python's own StoreTests, ``zarr.create_array`` and ``xarray.Dataset.to_zarr`` (appending
too), dask.distributed workers writing side by side, a killed writer, and the file read back
through our store, our xarray engine, tensogram's own reader and tensogram-zarr."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import textwrap
import tracemalloc

import numpy as np
import pytest

zarr = pytest.importorskip("zarr")
xr = pytest.importorskip("xarray")
from zarr.core.buffer import cpu  # noqa: E402
from zarr.testing.store import StoreTests  # noqa: E402

import tensogram as reference  # noqa: E402
import tensogram_zarr  # noqa: E402
import tensorkit  # noqa: E402
from tensorkit import tensogram  # noqa: E402
from tensorkit.zarr import ChunkedStore, Store  # noqa: E402


class TestChunkedStore(StoreTests[ChunkedStore, cpu.Buffer]):
    store_cls = ChunkedStore
    buffer_cls = cpu.Buffer

    @pytest.fixture
    def store_kwargs(self, tmp_path):
        return {"path": str(tmp_path / "z.tgm"), "mode": "w"}

    async def set(self, store, key, value):
        await store.set(key, value)

    async def get(self, store, key):
        from zarr.core.buffer import default_buffer_prototype

        return await store.get(key, prototype=default_buffer_prototype())

    def test_store_repr(self, store):
        assert repr(store).startswith("tensorkit.zarr.ChunkedStore(")

    def test_store_supports_writes(self, store):
        assert store.supports_writes and store.supports_deletes

    def test_store_supports_listing(self, store):
        assert store.supports_listing


def _field(shape=(10, 12), dtype="float32"):
    return (np.arange(np.prod(shape)) % 97).reshape(shape).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int16", "uint8", "complex64", "float16", "bool"])
def test_create_array_writes_one_object_per_chunk(tmp_path, dtype):
    path = tmp_path / "a.tgm"
    values = _field(dtype=dtype)
    with Store(path, mode="w") as s:
        # zarr's default compressor (zstd) encodes the chunks the store is given.
        a = zarr.create_array(s, name="x", shape=values.shape, chunks=(4, 5), dtype=dtype, attributes={"units": "K"})
        a[:] = values
        assert not path.exists(), "the file is written at close"
    assert not (tmp_path / ".a.tgm.zarr-parts").exists()
    with tensogram.TensogramFile.open(path) as f:
        assert len(f) == 1
        described = f.file_decode_descriptors(0)
        assert len(described["descriptors"]) == 9  # 3 × 3 chunks
        assert {tuple(d.shape) for d in described["descriptors"]} == {(4, 5)}
        assert described["metadata"].base[0]["units"] == "K"
        assert described["metadata"].base[0]["name"] == "x"
    back = zarr.open_group(Store(path), mode="r")
    assert isinstance(back.store, ChunkedStore)
    np.testing.assert_array_equal(back["x"][:], values)
    assert back["x"].attrs["units"] == "K" and back["x"].chunks == (4, 5)
    assert reference.TensogramFile.open(str(path)).message_count() == 1


def _dataset(times):
    rng = np.random.default_rng(len(times))
    return xr.Dataset(
        {"t2m": (("time", "lat", "lon"), rng.normal(280, 5, (len(times), 19, 36)))},
        coords={"time": np.array(times, dtype="datetime64[ns]"), "lat": np.linspace(90, -90, 19), "lon": np.arange(0, 360, 10.0)},
        attrs={"centre": "ecmf"},
    )


def test_to_zarr_appends_and_reads_back_everywhere(tmp_path):
    path = tmp_path / "ds.tgm"
    first = _dataset(["2026-01-01T00", "2026-01-01T06"])
    second = _dataset(["2026-01-01T12", "2026-01-01T18", "2026-01-02T00"])
    with Store(path, mode="w") as s:
        first.to_zarr(s, zarr_format=3, consolidated=False, encoding={"t2m": {"chunks": (1, 19, 36)}})
    with Store(path, mode="a") as s:
        second.to_zarr(s, append_dim="time", consolidated=False)
    want = xr.concat([first, second], "time")
    ours = xr.open_zarr(Store(path), consolidated=False).load()
    xr.testing.assert_identical(ours, want)
    engine = xr.open_dataset(path, engine="tensorkit").load()
    xr.testing.assert_identical(engine, want)
    # Every chunk an object, framed with its hash; tensogram's own reader decodes them.
    meta, objects = reference.TensogramFile.open(str(path)).decode_message(0, verify_hash=True)
    chunks = [o for o, b in zip(objects, meta.base) if b["name"] == "t2m"]
    assert len(chunks) == 5
    got = np.stack([a for _, a in sorted(zip([b["tensorkit_zarr"]["key"] for b in meta.base if b["name"] == "t2m"], [a for _, a in chunks]))])
    np.testing.assert_array_equal(got.reshape(5, 19, 36), want.t2m.values)
    # tensogram-zarr reads single-chunk arrays as arrays of their own (its own limit).
    g = zarr.open_group(tensogram_zarr.TensogramStore(str(path), mode="r"), mode="r")
    np.testing.assert_array_equal(g["lat"][:], want.lat.values)
    np.testing.assert_array_equal(g["lon"][:], want.lon.values)
    assert meta["centre"] == "ecmf"


def test_the_pipeline_and_hash_are_the_store_s(tmp_path):
    path = tmp_path / "p.tgm"
    ds = _dataset(["2026-01-01T00"])
    store = Store(path, mode="w", pipeline={"compression": "lz4"}, pipelines={"t2m": {"encoding": "simple_packing", "sp_bits_per_value": 24, "compression": "zstd"}}, hash=None)
    with store:
        ds.to_zarr(store, zarr_format=3, consolidated=False)
    with tensogram.TensogramFile.open(path) as f:
        d = f.file_decode_descriptors(0)
    by_name = {b["name"]: desc for b, desc in zip(d["metadata"].base, d["descriptors"])}
    assert by_name["t2m"].encoding == "simple_packing" and by_name["t2m"].compression == "zstd"
    assert by_name["lat"].encoding == "none" and by_name["lat"].compression == "lz4"
    back = xr.open_zarr(Store(path), consolidated=False).load()
    np.testing.assert_allclose(back.t2m.values, ds.t2m.values, atol=1e-3)
    np.testing.assert_array_equal(back.lat.values, ds.lat.values)
    with pytest.raises(reference.MissingHashError):
        reference.TensogramFile.open(str(path)).decode_message(0, verify_hash=True)


def test_memory_stays_at_a_few_chunks(tmp_path):
    chunk = np.ones((256, 512), np.float64)  # 1 MiB
    with Store(tmp_path / "m.tgm", mode="w") as s:
        a = zarr.create_array(s, name="x", shape=(256 * 40, 512), chunks=chunk.shape, dtype="float64", compressors=None)
        tracemalloc.start()
        for i in range(40):
            a[i * 256 : (i + 1) * 256] = chunk * i
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert peak < 8 * chunk.nbytes, f"{peak / 2**20:.1f} MiB held for 40 MiB written"
    back = zarr.open_array(Store(tmp_path / "m.tgm"), path="x", mode="r")
    assert back[256 * 39, 0] == 39.0


def test_a_killed_writer_leaves_the_old_file_and_its_keys_for_the_next(tmp_path):
    path = tmp_path / "k.tgm"
    with Store(path, mode="w") as s:
        zarr.create_array(s, name="x", shape=(8,), chunks=(4,), dtype="int32")[:] = np.arange(8)
    before = path.read_bytes()
    script = textwrap.dedent(f"""
        import os, zarr, numpy as np
        from tensorkit.zarr import Store
        s = Store({str(path)!r}, mode="a")
        a = zarr.open_array(s, path="x", mode="r+")
        a[4:] = np.arange(100, 104)
        os._exit(9)  # killed before close
    """)
    done = subprocess.run([sys.executable, "-c", script], check=False)
    assert done.returncode == 9
    assert path.read_bytes() == before, "the file is untouched until a close"
    # The next writer's close takes in the chunk the killed one wrote.
    with Store(path, mode="a"):
        pass
    np.testing.assert_array_equal(zarr.open_array(Store(path), path="x", mode="r")[:], [0, 1, 2, 3, 100, 101, 102, 103])


def test_copies_on_dask_workers_write_side_by_side(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    path = tmp_path / "d.tgm"
    ds = _dataset([f"2026-01-0{d}T00" for d in range(1, 9)]).chunk({"time": 1})
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, distributed.Client(cluster):
        with Store(path, mode="w") as s:
            ds.to_zarr(s, zarr_format=3, consolidated=False)
            copy = pickle.loads(pickle.dumps(s))
            assert copy == s and not copy._owner
    xr.testing.assert_identical(xr.open_zarr(Store(path), consolidated=False).load(), ds.load())
    assert not os.path.exists(tmp_path / ".d.tgm.zarr-parts")


def test_appending_to_a_file_no_store_wrote_is_refused(tmp_path):
    path = tmp_path / "plain.tgm"
    tensogram.TensogramFile.create(path).append({"version": 3}, [({"type": "ntensor", "shape": [2], "dtype": "float32"}, np.zeros(2, np.float32))])
    with pytest.raises(tensorkit.UnsupportedError, match="not a file a ChunkedStore wrote"):
        Store(path, mode="a")
