"""tensorkit.open: every format as a mapping of numpy arrays, zero-copy where stored raw."""

import gc
import json
import pickle

import ml_dtypes
import numpy as np
import pytest
import safetensors.numpy as reference

import tensorkit

# Bad for the reference, read on purpose by tensorkit: the pre-release BinTensors layout
# (read as `bintensors-legacy`), and a Tensogram file without hashes (an error only when a
# hash check is asked for: see test_a_damaged_file_is_never_read_as_sound).
READ_ON_PURPOSE = {"legacy_prerelease_layout.bt", "verify_hash_on_unhashed.tgm"}

FORMATS = {"safetensors": "safetensors", "bintensors": "bt", "ztensor": "zt", "tensogram": "tgm"}


def fixtures(testdata, kind):
    return sorted(p for p in (testdata / kind / "conformance").glob(f"*.{FORMATS[kind]}"))


def test_safetensors_fixtures_read_as_the_reference_reads_them(testdata):
    files = fixtures(testdata, "safetensors")
    assert files
    for path in files:
        try:
            expected = reference.load_file(path)
        except Exception:
            continue  # dtypes safetensors' numpy side cannot give (float8 before 0.5...)
        with tensorkit.open(path) as f:
            assert f.format == "safetensors"
            assert sorted(f) == sorted(expected)
            for name, want in expected.items():
                got = f[name]
                assert got.shape == want.shape and got.dtype == want.dtype, name
                assert got.tobytes() == want.tobytes(), name


@pytest.mark.parametrize("kind", list(FORMATS))
def test_every_fixture_opens_and_reads_alike_three_ways(testdata, kind):
    for path in fixtures(testdata, kind):
        sidecar = path.with_suffix(".json")
        if sidecar.exists() and json.loads(sidecar.read_text()).get("expected") == "reject":
            continue
        with tensorkit.open(path) as f:
            assert len(f) == len(list(f))
            for name in f:
                info = f.info(name)
                if info["dtype"] == "bitmask":
                    continue
                a = f[name]
                assert a.shape == info["shape"]
                assert a.dtype == tensorkit._dtypes.to_numpy(info["dtype"])
                out = f.get(name, out=np.empty_like(a))
                assert out.tobytes() == a.tobytes(), (path.name, name)
                assert a.flags.writeable != info["zero_copy"]


def test_raw_tensors_are_read_only_views_that_keep_the_file_mapped(tmp_path):
    w = np.arange(12, dtype=np.float32).reshape(3, 4)
    tensorkit.save(tmp_path / "w.safetensors", {"w": w})
    f = tensorkit.open(tmp_path / "w.safetensors")
    a = f["w"]
    assert f.info("w")["zero_copy"]
    assert not a.flags.writeable and not a.flags.owndata
    with pytest.raises(ValueError):
        a[0, 0] = 1
    f.close()
    assert f.closed
    with pytest.raises(ValueError):
        len(f)
    del f
    gc.collect()
    # The array still reads the mapping the closed file left to it.
    assert (a == w).all()


def _bench():
    """The Python benchmark's module, for its page-cache eviction and ``mincore`` probe."""
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).parents[2] / "bench" / "bench_python.py"
    spec = importlib.util.spec_from_file_location("bench_python", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(not hasattr(__import__("os"), "posix_fadvise"), reason="posix_fadvise")
def test_a_prefetched_range_is_read_into_the_page_cache_whole(tmp_path):
    # The kernel reads one read-ahead window per hint (8 MiB or 128 KiB, by the device) and
    # drops the rest: a prefetch of a longer range must hint it a window at a time.
    import time

    bench = _bench()
    path = tmp_path / "big.safetensors"
    rng = np.random.default_rng(53)
    tensorkit.save(path, {"w": rng.integers(0, 256, size=40 << 20, dtype=np.uint8)})
    if bench.evict(path) > 0.01:
        pytest.skip("this file system keeps the file in memory")
    with tensorkit.open(path) as f:
        f._native.prefetch(0, 0, path.stat().st_size, background=False)
    deadline = time.monotonic() + 20
    while bench.cached_fraction(path) < 0.99 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert bench.cached_fraction(path) >= 0.99


def test_encoded_tensors_are_decoded_into_writable_arrays(tmp_path):
    t = np.linspace(250, 300, 1000).reshape(10, 100)
    tensorkit.save(tmp_path / "t.tgm", {"t2m": t}, pipeline="simple_packing:24,szip")
    with tensorkit.open(tmp_path / "t.tgm") as f:
        info = f.info("t2m")
        assert info["encoding"] == "simple_packing+szip"
        assert not info["zero_copy"]
        a = f["t2m"]
        assert a.flags.writeable
        assert np.abs(a - t).max() < 1e-4


def test_get_decodes_into_the_callers_array_and_checks_it(tmp_path):
    w = np.arange(6, dtype=np.int16).reshape(2, 3)
    tensorkit.save(tmp_path / "w.zt", {"w": w})
    with tensorkit.open(tmp_path / "w.zt") as f:
        out = np.zeros((2, 3), dtype=np.int16)
        assert f.get("w", out=out) is out
        assert (out == w).all()
        assert f.get("missing") is None and f.get("missing", 7) == 7
        with pytest.raises(KeyError):
            f["missing"]
        for bad in (np.zeros((3, 2), np.int16), np.zeros((2, 3), np.int32), np.zeros((2, 6), np.int16)[:, ::2]):
            with pytest.raises(tensorkit.InvalidArgumentError):
                f.get("w", out=bad)


def test_every_dtype_round_trips_bit_for_bit_through_every_format(tmp_path):
    rng = np.random.default_rng(1)
    raw = rng.integers(0, 256, size=64, dtype=np.uint8)
    tensors = {
        "f32": np.array([np.nan, -0.0, np.inf, 1.5], dtype=np.float32),
        "nan_payload": np.array([0x7FC12345, 0xFF800001], dtype=np.uint32).view(np.float32),
        "f64": rng.normal(size=(3, 5)),
        "i8": np.array([-128, 127], dtype=np.int8),
        "u64": np.array([2**64 - 1], dtype=np.uint64),
        "b": np.array([True, False, True]),
        "bf16": raw[:8].view(ml_dtypes.bfloat16),
        "f8": raw[:5].view(ml_dtypes.float8_e4m3fn),
        "f8e5": raw[:5].view(ml_dtypes.float8_e5m2),
        "scalar": np.array(2.5, dtype=np.float16),
        "empty": np.zeros((0, 3), dtype=np.float32),
    }
    # Tensogram keeps NaN payloads only when asked (its masks give the canonical NaN, which
    # is what tensogram itself writes); the other formats always do.
    for ext, extensions in (("safetensors", False), ("bt", False), ("zt", False), ("tgm", True)):
        path = tmp_path / f"all.{ext}"
        left_out = tensorkit.save(path, tensors, allow_extensions=extensions)
        assert left_out == []
        with tensorkit.open(path) as f:
            for name, want in tensors.items():
                got = f[name]
                assert got.dtype == want.dtype and got.shape == want.shape, (ext, name)
                assert got.tobytes() == want.tobytes(), (ext, name)
    # By default the payloads are refused, naming the tensor; canonical NaN on request.
    path = tmp_path / "masked.tgm"
    with pytest.raises(tensorkit.UnsupportedError, match='tensor "nan_payload"'):
        tensorkit.save(path, tensors)
    assert not path.exists()
    tensorkit.save(path, tensors, canonical_nan=True)
    with tensorkit.open(path) as f:
        for name, want in tensors.items():
            got = f[name]
            if name == "nan_payload":
                assert np.isnan(got).all()
            elif name == "f32":
                np.testing.assert_array_equal(got, want)
                assert np.signbit(got[1])
            else:
                assert got.tobytes() == want.tobytes(), name


def test_four_bit_floats_hold_one_element_per_byte(tmp_path):
    f4 = np.array([0.5, 1.0, -2.0, 6.0, -6.0, 0.0], dtype=ml_dtypes.float4_e2m1fn)
    tensorkit.save(tmp_path / "f4.safetensors", {"f4": f4})
    with pytest.raises(tensorkit.UnsupportedError):  # safetensors stores whole bytes only
        tensorkit.save(tmp_path / "odd.safetensors", {"f4": f4[:5]})
    with tensorkit.open(tmp_path / "f4.safetensors") as f:
        assert f.info("f4")["dtype"] == "float4_e2m1"
        assert f.info("f4")["nbytes"] == 3  # packed two per byte in the file
        got = f["f4"]
        assert got.dtype == f4.dtype and (got.astype(np.float32) == f4.astype(np.float32)).all()


def test_non_native_and_non_contiguous_arrays_are_saved_as_values(tmp_path):
    big = np.arange(6, dtype=">f8").reshape(2, 3)
    strided = np.arange(20, dtype=np.int32).reshape(4, 5)[:, ::2]
    tensorkit.save(tmp_path / "x.bt", {"big": big, "strided": strided})
    with tensorkit.open(tmp_path / "x.bt") as f:
        assert (f["big"] == big).all() and f["big"].dtype == np.float64
        assert (f["strided"] == strided).all()


def test_metadata_formats_and_conversion(tmp_path):
    w = np.ones((2, 2), dtype=np.float32)
    tensorkit.save(tmp_path / "w.safetensors", {"w": w}, metadata={"purpose": "test"})
    for ext, fmt in (("tgm", "tensogram"), ("zt", "ztensor-2"), ("bt", "bintensors")):
        out = tmp_path / f"w.{ext}"
        assert tensorkit.convert(tmp_path / "w.safetensors", out) == []
        with tensorkit.open(out) as f:
            assert f.format == fmt
            assert f.metadata["purpose"] == "test"
            assert (f["w"] == w).all()
    assert tensorkit.open(tmp_path / "w.safetensors").metadata == {"purpose": "test"}
    with pytest.raises(tensorkit.InvalidArgumentError):
        tensorkit.save(tmp_path / "w.unknown", {"w": w})
    with pytest.raises(tensorkit.InvalidArgumentError):
        tensorkit.save(tmp_path / "w.bt", {"w": w}, alignment="4KiB")
    assert not (tmp_path / "w.unknown").exists()


def test_attributes_and_reports_arrive_as_python_values(tmp_path):
    """Values cross from Rust as Python objects, not JSON text: bytes stay bytes, NaN stays
    a float, integers stay integers; reports are dicts of the same values."""
    from tensorkit import tensogram

    w = np.arange(4, dtype=np.float32)
    attributes = {"name": "w", "blob": b"\x00\xff", "x": float("nan"), "n": -3, "big": 2**64 - 1}
    msg = tensogram.encode({"base": [attributes]}, [({"type": "ntensor", "shape": [4], "dtype": "float32"}, w)])
    (tmp_path / "a.tgm").write_bytes(msg)
    with tensorkit.open(tmp_path / "a.tgm") as f:
        got = f.info("w")["attributes"]
    assert got["blob"] == b"\x00\xff" and isinstance(got["blob"], bytes)
    assert isinstance(got["x"], float) and np.isnan(got["x"])
    assert got["n"] == -3 and got["big"] == 2**64 - 1
    report = tensorkit.validate(tmp_path / "a.tgm")
    assert report == {"format": "tensogram", "valid": True, "tensors": 1, "hashes_verified": report["hashes_verified"], "problems": []}
    assert report["hashes_verified"] > 0


def test_the_format_registry_is_rusts_and_the_xarray_engine_follows_it(tmp_path):
    from tensorkit.xarray import TensorkitBackendEntrypoint

    listed = {f["id"]: f for f in tensorkit.formats()}
    assert {"safetensors", "bintensors", "ztensor-2", "tensogram", "grib", "gguf"} <= set(listed)
    assert listed["tensogram"]["extensions"][0] == "tgm" and listed["grib"]["writes"] is True
    assert listed["grib"]["any_tensor"] is False and listed["tensogram"]["any_tensor"] is True
    engine = TensorkitBackendEntrypoint()
    for f in listed.values():
        for ext in f["extensions"]:
            assert engine.guess_can_open(tmp_path / f"x.{ext}"), ext
    # NetCDF: the classic files tensorkit reads, not NetCDF-4 (HDF5) ones.
    (tmp_path / "classic.nc").write_bytes(b"CDF\x01" + bytes(28))
    (tmp_path / "hdf5.nc").write_bytes(b"\x89HDF\r\n\x1a\n" + bytes(88))
    assert engine.guess_can_open(tmp_path / "classic.nc")
    assert not engine.guess_can_open(tmp_path / "hdf5.nc")
    # A name with a writable format's first extension saves in that format.
    w = np.ones(3, dtype=np.float32)
    for f in listed.values():
        if f["writes"] and f["any_tensor"] and f["id"] not in ("bintensors-legacy", "ztensor-0.1"):
            path = tmp_path / f"w.{f['extensions'][0]}"
            tensorkit.save(path, {"w": w})
            with tensorkit.open(path) as back:
                assert back.format == f["id"], path


def test_repeated_names_are_refused_or_renamed_on_request(tmp_path):
    from tensorkit import tensogram

    one = tensogram.encode({"base": [{"name": "w"}]}, [({"type": "ntensor", "shape": [2], "dtype": "float32"}, np.ones(2, np.float32))])
    (tmp_path / "twice.tgm").write_bytes(one + one)
    with pytest.raises(tensorkit.UnsupportedError, match='two tensors named "w"'):
        tensorkit.convert(tmp_path / "twice.tgm", tmp_path / "twice.safetensors")
    assert not (tmp_path / "twice.safetensors").exists()
    tensorkit.convert(tmp_path / "twice.tgm", tmp_path / "twice.safetensors", duplicates="suffix")
    with tensorkit.open(tmp_path / "twice.safetensors") as f:
        assert sorted(f) == ["w", "w~m1"]
    with pytest.raises(tensorkit.InvalidArgumentError):
        tensorkit.convert(tmp_path / "twice.tgm", tmp_path / "x.safetensors", duplicates="rename")


def test_serialize_gives_the_bytes_save_writes(tmp_path):
    w = np.arange(12, dtype=np.float32).reshape(3, 4)
    meta = {"purpose": "test"}
    for ext, fmt in (("safetensors", "safetensors"), ("bt", "bintensors"), ("zt", "ztensor-2")):
        path = tmp_path / f"w.{ext}"
        tensorkit.save(path, {"w": w}, metadata=meta)
        assert tensorkit.serialize({"w": w}, fmt, metadata=meta) == path.read_bytes(), fmt
    packed = tensorkit.serialize({"w": w}, "tensogram", pipeline="shuffle,zstd:3")
    (tmp_path / "w.tgm").write_bytes(packed)
    with tensorkit.open(tmp_path / "w.tgm") as f:
        assert (f["w"] == w).all()
    with pytest.raises(tensorkit.InvalidArgumentError, match="unknown format"):
        tensorkit.serialize({"w": w}, "pickle")
    with pytest.raises(tensorkit.InvalidArgumentError):
        tensorkit.serialize({"w": w}, "tensogram", pipeline="shuffle,nonsense")


def test_fsync_syncs_the_same_bytes(tmp_path):
    w = np.arange(5000, dtype=np.float32).reshape(50, 100)
    for ext in ("safetensors", "zt", "tgm"):
        plain, synced = tmp_path / f"plain.{ext}", tmp_path / f"synced.{ext}"
        tensorkit.save(plain, {"w": w})
        tensorkit.save(synced, {"w": w}, fsync=True)
        if ext != "tgm":  # Tensogram records when a message was written
            assert plain.read_bytes() == synced.read_bytes()
        with tensorkit.open(synced) as f:
            assert (f["w"] == w).all()
    tensorkit.convert(tmp_path / "plain.zt", tmp_path / "c.bt", fsync=True)
    assert (tensorkit.open(tmp_path / "c.bt")["w"] == w).all()
    shards = tmp_path / "s.safetensors"
    tensorkit.save(shards, {"a": w, "b": w}, max_shard_size="20KB", fsync=True)
    with tensorkit.open(tmp_path / "s.safetensors.index.json") as f:
        assert sorted(f) == ["a", "b"]
    assert not [p for p in tmp_path.iterdir() if ".tkw-" in p.name]


def test_shard_sets_and_lists_of_files_open_as_one(tmp_path):
    tensors = {f"layer.{i}": np.full((64,), i, dtype=np.float32) for i in range(4)}
    tensorkit.save(tmp_path / "model.safetensors", tensors, max_shard_size="600B")
    index = tmp_path / "model.safetensors.index.json"
    assert index.exists()
    with tensorkit.open(index) as f:
        assert sorted(f) == sorted(tensors)
        assert (f["layer.3"] == 3).all()
    tensorkit.save(tmp_path / "a.bt", {"a": np.zeros(2)})
    tensorkit.save(tmp_path / "b.zt", {"b": np.ones(2)})
    with tensorkit.open([tmp_path / "a.bt", tmp_path / "b.zt"]) as f:
        assert list(f) == ["a", "b"]


def test_files_pickle_as_what_reopens_them(tmp_path):
    tensorkit.save(tmp_path / "p.zt", {"p": np.arange(3)})
    f = tensorkit.open(tmp_path / "p.zt", verify=False)
    g = pickle.loads(pickle.dumps(f))
    assert (g["p"] == f["p"]).all()
    with pytest.raises(TypeError):
        pickle.dumps(tensorkit.open_bytes((tmp_path / "p.zt").read_bytes()))


def test_hostile_files_raise_tensorkit_errors_with_kinds(testdata):
    seen = 0
    for kind in ("safetensors", "bintensors", "ztensor", "tensogram"):
        for path in sorted((testdata / kind / "conformance" / "bad").glob("*")):
            if path.suffix == ".json" or path.name in READ_ON_PURPOSE:
                continue
            seen += 1
            with pytest.raises(tensorkit.TensorkitError) as e:
                with tensorkit.open(path) as f:
                    for name in f:
                        f[name]
                    f.verify()  # what zero-copy arrays leave for when it is asked
            assert e.value.kind in {
                "io", "truncated", "malformed", "unsupported", "limit_exceeded",
                "checksum_mismatch", "invalid_argument", "missing_hash",
            }
    assert seen > 10


def test_limits_bound_what_a_file_may_ask_for(tmp_path):
    tensorkit.save(tmp_path / "big.tgm", {"z": np.zeros(1 << 20)}, pipeline="zstd")
    with pytest.raises(tensorkit.LimitExceededError):
        tensorkit.open(tmp_path / "big.tgm", max_memory=1 << 16)
    with pytest.raises(tensorkit.LimitExceededError):
        tensorkit.open(tmp_path / "big.tgm", max_ratio=2)
    assert tensorkit.open(tmp_path / "big.tgm")["z"].sum() == 0


def test_a_damaged_file_is_never_read_as_sound(tmp_path):
    tensorkit.save(tmp_path / "d.zt", {"d": np.arange(1000, dtype=np.float64)})
    data = bytearray((tmp_path / "d.zt").read_bytes())
    data[65536 + 100] ^= 0xFF  # inside the blob, which carries a digest
    (tmp_path / "bad.zt").write_bytes(bytes(data))
    with tensorkit.open(tmp_path / "bad.zt") as f:
        # A zero-copy array costs nothing however large the tensor: its digest is checked
        # when asked, and whenever the elements are copied out.
        assert f["d"].shape == (1000,)
        with pytest.raises(tensorkit.ChecksumMismatchError, match="d"):
            f.verify("d")
        with pytest.raises(tensorkit.ChecksumMismatchError):
            f.verify()
        with pytest.raises(tensorkit.ChecksumMismatchError):
            f.get("d", out=np.empty(1000))
        with pytest.raises(KeyError):
            f.verify("nothing")
    with tensorkit.open(tmp_path / "d.zt") as f:
        f.verify()
        f.verify("d")
        assert np.array_equal(f.get("d", out=np.empty(1000)), np.arange(1000.0))
    report = tensorkit.validate(tmp_path / "bad.zt")
    assert report["problems"]
    assert tensorkit.validate(tmp_path / "d.zt")["problems"] == []


def test_load_decodes_every_tensor_side_by_side_as_indexing_does(testdata, tmp_path):
    rng = np.random.default_rng(5)
    fields = {f"f{i}": rng.normal(280, 5, (40, 60)) for i in range(6)}
    tensorkit.save(tmp_path / "m.tgm", fields, pipeline="simple_packing:24,szip")
    tensorkit.save(tmp_path / "m.safetensors", fields)
    sources = [tmp_path / "m.tgm", tmp_path / "m.safetensors"]
    sources += [testdata / "grib" / "reference" / n for n in ("jpeg.grib2", "mixed.grib", "ccsds.grib2")]
    for path in sources:
        with tensorkit.open(path) as f:
            one_by_one = {name: f[name] for name in f}
            for threads in (0, 1, 2, 3):
                loaded = f.load(threads=threads)
                assert list(loaded) == list(f), (path.name, threads)
                for name, a in loaded.items():
                    b = one_by_one[name]
                    assert a.dtype == b.dtype and a.shape == b.shape
                    assert a.tobytes() == b.tobytes(), (path.name, name, threads)
                    assert a.flags.writeable == b.flags.writeable
            some = list(f)[::-1][:2]
            assert list(f.load(some)) == some
            with pytest.raises(KeyError):
                f.load(["not there"])
            with pytest.raises(tensorkit.InvalidArgumentError):
                f.load(threads=-1)
    # The tensors decoded together must fit the memory limit, not only each on its own.
    with tensorkit.open(tmp_path / "m.tgm", max_memory=40 * 60 * 8 * 2) as f:
        assert all(f[name].shape == (40, 60) for name in f)
        assert len(f.load(["f0", "f1"])) == 2
        with pytest.raises(tensorkit.LimitExceededError):
            f.load()
    # A damaged tensor is an error naming it, whichever thread decoded it.
    tensorkit.save(tmp_path / "d.tgm", {"a": np.arange(1000.0), "b": np.arange(1000.0) + 1}, pipeline="zstd")
    data = bytearray((tmp_path / "d.tgm").read_bytes())
    data[data.rindex(b"\x28\xb5\x2f\xfd") + 40] ^= 0xFF  # inside b's zstd frame
    (tmp_path / "bad.tgm").write_bytes(bytes(data))
    with tensorkit.open(tmp_path / "bad.tgm") as f:
        assert np.array_equal(f.load(["a"])["a"], np.arange(1000.0))
        for threads in (0, 1):
            with pytest.raises(tensorkit.ChecksumMismatchError, match='tensor "b"'):
                f.load(threads=threads)


def test_sizes_are_written_one_way_everywhere(tmp_path):
    path = tmp_path / "w.tgm"
    tensorkit.save(path, {"w": np.zeros(1000, dtype=np.float64)}, pipeline="zstd:3")
    assert tensorkit.open(path, max_memory="1MiB")["w"].shape == (1000,)
    with pytest.raises(tensorkit.LimitExceededError):
        tensorkit.open(path, max_memory="1KB", max_ratio=1)["w"]
    with pytest.raises(tensorkit.InvalidArgumentError):
        tensorkit.open(path, max_memory="8 lightyears")


def test_the_dtype_table_comes_from_rust_and_names_real_types():
    """Every dtype the library has is in the one table (``_tensorkit.dtypes()``) the
    numpy, torch and Zarr mappings are built from, and each numpy name it gives is a type
    numpy or ml_dtypes has."""
    from tensorkit import _dtypes, _tensorkit

    table = {d["name"]: d for d in _tensorkit.dtypes()}
    assert set(table) >= {"bool", "bitmask", "float8_e4m3", "float4_e2m1", "complex128"}
    for name, d in table.items():
        if d["numpy"] is None:
            continue
        want = getattr(ml_dtypes, d["numpy"]) if d["ml_dtypes"] else np.dtype(d["numpy"])
        assert _dtypes.to_numpy(name) == np.dtype(want), name
        if name != "bitmask":
            assert _dtypes.from_numpy(np.dtype(want)) == name
    assert table["bitmask"]["numpy"] == "bool" and table["bitmask"]["zarr"]
    assert not table["bfloat16"]["zarr"]
