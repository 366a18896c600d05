"""What tensorkit saves, each format's own package opens with the same values; what they
save, tensorkit opens with the same values."""

import ml_dtypes
import numpy as np
import pytest
import safetensors.numpy as st
import tensogram
import bintensors.numpy as bt
import ztensor.numpy as zt

import tensorkit

RNG = np.random.default_rng(3)

TENSORS = {
    "w.f32": RNG.normal(size=(16, 8)).astype(np.float32),
    "w.f64": RNG.normal(size=(5,)),
    "w.f16": RNG.normal(size=(4, 4)).astype(np.float16),
    "w.bf16": RNG.normal(size=(6,)).astype(ml_dtypes.bfloat16),
    "i8": np.arange(-4, 4, dtype=np.int8),
    "i16": np.arange(6, dtype=np.int16).reshape(2, 3),
    "i32": np.arange(-3, 3, dtype=np.int32),
    "i64": np.array([2**40, -(2**40)], dtype=np.int64),
    "u8": np.arange(250, 256, dtype=np.uint8),
    "flags": np.array([True, False, True]),
}


def readers():
    """Each package's loader for the file tensorkit saved at `path`: name -> array."""

    def tgm(path):
        out = {}
        with tensogram.TensogramFile.open(str(path)) as f:
            for message in f:
                for base, (desc, arr) in zip(message.metadata.base, message.objects):
                    out[base["name"]] = arr
        return out

    return {
        "safetensors": (".safetensors", st.load_file),
        "bintensors": (".bt", bt.load_file),
        "ztensor": (".zt", zt.load_file),
        "tensogram": (".tgm", tgm),
    }


def same(got, want, name):
    got = np.asarray(got)
    if want.dtype == ml_dtypes.bfloat16 and got.dtype == np.uint16:
        got = got.view(ml_dtypes.bfloat16)  # packages that give bfloat16 as its bits
    if got.dtype == np.uint8 and got.shape == (*want.shape, want.itemsize) != want.shape:
        got = got.view(want.dtype)[..., 0]  # ztensor's numpy side: bytes per element
    assert got.shape == want.shape, name
    assert got.tobytes() == want.tobytes(), name


@pytest.mark.parametrize("package", ["safetensors", "bintensors", "ztensor", "tensogram"])
def test_the_reference_packages_open_what_tensorkit_saves(tmp_path, package):
    ext, load = readers()[package]
    tensors = TENSORS  # a bool array goes to Tensogram as uint8 0/1, marked as bool for tensorkit
    path = tmp_path / f"model{ext}"
    tensorkit.save(path, tensors)
    loaded = load(path)
    assert sorted(loaded) == sorted(tensors)
    for name, want in tensors.items():
        same(loaded[name], want, name)


def test_non_finite_values_pass_tensograms_full_validation(tmp_path):
    """NaN and ±Inf saved from safetensors go into tensogram's masks: its full validation
    reports nothing, and every value reads back in tensogram and tensorkit. The masks give
    NaN back as the canonical NaN, so a NaN with a sign or another payload is refused by
    default, canonicalised on request (``canonical_nan``), kept bit for bit on request
    (``allow_extensions``, which tensogram flags)."""
    f = np.array([1.5, np.nan, np.inf, -np.inf, -0.0, 2.0], dtype=np.float32)
    d = np.array([np.nan, 3.0, -np.inf], dtype=np.float64)
    d[0] = np.frombuffer(np.uint64(0xFFF80000DEADBEEF).tobytes(), dtype=np.float64)[0]
    c = np.array([complex(np.inf, np.inf), complex(np.nan, np.nan), 1 + 2j], dtype=np.complex64)
    src = tmp_path / "nf.safetensors"
    st.save_file({"f": f, "d": d, "c": c}, str(src))
    out = tmp_path / "nf.tgm"
    with pytest.raises(tensorkit.UnsupportedError, match='element 0 of tensor "d"'):
        tensorkit.convert(src, out)
    assert not out.exists()
    tensorkit.convert(src, out, canonical_nan=True)
    data = out.read_bytes()
    report = tensogram.validate(data, level="full")
    assert report["issues"] == [], report
    decoded = tensogram.decode(data)
    wanted = {"f": f, "d": d, "c": c}
    for base, (desc, arr) in zip(decoded.metadata.base, decoded.objects, strict=True):
        np.testing.assert_array_equal(np.asarray(arr), wanted[base["name"]])
    with tensorkit.open(out) as back:
        for name, want in {"f": f, "d": d, "c": c}.items():
            np.testing.assert_array_equal(back[name], want)
    kept = tmp_path / "kept.tgm"
    tensorkit.convert(src, kept, allow_extensions=True)
    with tensorkit.open(kept) as back:
        assert back["d"].tobytes() == d.tobytes()
    codes = {i["code"] for i in tensogram.validate(kept.read_bytes(), level="full")["issues"]}
    assert "nan_detected" in codes
    # Masks give a complex number with one non-finite part back as NaN or Inf in both parts
    # (tensogram's own encoder changes it so): refused rather than changed.
    half = np.array([complex(np.inf, 1.0)], dtype=np.complex64)
    st.save_file({"half": half}, str(tmp_path / "half.safetensors"))
    with pytest.raises(tensorkit.UnsupportedError, match="half"):
        tensorkit.convert(tmp_path / "half.safetensors", tmp_path / "half.tgm")
    assert not (tmp_path / "half.tgm").exists()


def test_tensorkit_opens_what_the_reference_packages_save(tmp_path):
    plain = {k: v for k, v in TENSORS.items() if k not in ("w.bf16", "flags", "u8")}
    st.save_file(TENSORS, tmp_path / "a.safetensors")
    bt.save_file(plain, tmp_path / "a.bt")
    no_bf16 = {k: v for k, v in TENSORS.items() if k != "w.bf16"}  # ztensor.numpy refuses it
    zt.save_file(no_bf16, tmp_path / "a.zt")
    zt.save_file(no_bf16, tmp_path / "c.zt", compression=True)
    tg_plain = {k: v for k, v in plain.items() if k != "w.f16"}  # its encoder lacks float16
    with tensogram.TensogramFile.create(str(tmp_path / "a.tgm")) as f:
        for name, arr in tg_plain.items():
            desc = {"type": "ntensor", "shape": list(arr.shape), "dtype": arr.dtype.name}
            f.append({"base": [{"name": name}]}, [(desc, arr)])
    expected = {"a.safetensors": TENSORS, "a.bt": plain, "a.zt": no_bf16, "c.zt": no_bf16, "a.tgm": tg_plain}
    for file, want in expected.items():
        with tensorkit.open(tmp_path / file) as f:
            assert sorted(f) == sorted(want), file
            for name, arr in want.items():
                same(f[name], arr, f"{file}:{name}")


@pytest.mark.parametrize("codec", ["blosclz", "lz4", "lz4hc", "zlib", "zstd"])
def test_tensogram_reads_blosc2_that_tensorkit_writes(tmp_path, codec):
    rng = np.random.default_rng(7)
    tensors = {
        "f8": np.cumsum(rng.normal(size=(30, 40)), axis=1),
        "f4": rng.normal(size=500).astype(np.float32),
        "i2": rng.integers(-300, 300, size=(7, 9), dtype=np.int16),
        "u1": rng.integers(0, 255, size=333, dtype=np.uint8),
    }
    for spec in [f"blosc2:{codec}:5", f"shuffle,blosc2:{codec}:9"]:
        path = tmp_path / f"{codec}.tgm"
        tensorkit.save(path, tensors, pipeline=spec)
        meta, objects = tensogram.decode(path.read_bytes(), verify_hash=True)
        for (desc, arr), (name, want) in zip(objects, tensors.items(), strict=True):
            assert desc.compression == "blosc2"
            assert desc.params["blosc2_codec"] == codec
            np.testing.assert_array_equal(np.asarray(arr), want, err_msg=f"{spec} {name}")


@pytest.mark.parametrize(
    "spec,params",
    [
        ("zfp:rate:16", {"zfp_mode": "fixed_rate", "zfp_rate": 16.0}),
        ("zfp:precision:32", {"zfp_mode": "fixed_precision", "zfp_precision": 32}),
        ("zfp:accuracy:0.001", {"zfp_mode": "fixed_accuracy", "zfp_tolerance": 0.001}),
    ],
)
def test_lossy_codecs_that_tensorkit_writes_are_tensograms(tmp_path, spec, params):
    y, x = np.mgrid[0:30, 0:40]
    field = 250.0 + 20.0 * np.sin(x / 7.0) * np.cos(y / 5.0)
    path = tmp_path / "z.tgm"
    tensorkit.save(path, {"t": field}, pipeline=spec)
    ours = tensogram.decode(path.read_bytes(), verify_hash=True)[1][0]
    desc = {
        "type": "ntensor",
        "shape": [30, 40],
        "dtype": "float64",
        "byte_order": "little",
        "encoding": "none",
        "filter": "none",
        "compression": spec.split(":")[0],
        **params,
    }
    theirs = tensogram.decode(tensogram.encode({}, [(desc, field)]))[1][0]
    assert {k: ours[0].params[k] for k in params} == params
    np.testing.assert_array_equal(np.asarray(ours[1]), np.asarray(theirs[1]))
    bound = params.get("zfp_tolerance", params.get("sz3_error_bound") if spec.startswith("sz3:abs") else None)
    if bound is not None:
        assert np.max(np.abs(np.asarray(ours[1]) - field)) <= bound


def test_sz3_objects_tensogram_wrote_read_as_tensogram_decodes_them(testdata, tmp_path):
    """SZ3 is on by default (each decode runs in a child process, so a damaged stream is an
    error, never a crash): tensogram 0.24's SZ3 objects give its values bit for bit, and
    what tensorkit writes through SZ3 tensogram decodes to the same values."""
    import hashlib
    import json

    path = testdata / "tensogram" / "reference" / "codecs" / "sz3_bounds.tgm"
    sidecar = json.loads(path.with_suffix(".json").read_text())
    with tensorkit.open(path) as f:
        for want in sidecar["objects"]:
            got = np.ascontiguousarray(f[want["name"]]).astype("<f8", copy=False)
            assert hashlib.sha256(got.tobytes()).hexdigest() == want["sha256"], want["name"]
    y, x = np.mgrid[0:30, 0:40]
    field = 250.0 + 20.0 * np.sin(x / 7.0) * np.cos(y / 5.0)
    out = tmp_path / "sz3.tgm"
    tensorkit.save(out, {"t": field}, pipeline="sz3:abs:0.001")
    theirs = np.asarray(tensogram.decode(out.read_bytes(), verify_hash=True)[1][0][1])
    with tensorkit.open(out) as f:
        np.testing.assert_array_equal(f["t"], theirs)
    assert np.max(np.abs(theirs - field)) <= 0.001
    # A damaged stream: the frame's hash says so (or the flip changed nothing that holds
    # values); unverified, SZ3 (which has no checksum of its own) decodes it or refuses it,
    # and whatever it does, the process carries on — one byte at a time through the file.
    data = out.read_bytes()
    damaged = tmp_path / "damaged.tgm"
    for at in range(len(data) // 4, 3 * len(data) // 4, 7):
        flipped = bytearray(data)
        flipped[at] ^= 0xFF
        damaged.write_bytes(bytes(flipped))
        try:
            with tensorkit.open(damaged) as f:
                # Read as sound only where the flip changed nothing that holds values.
                np.testing.assert_array_equal(f["t"], theirs)
        except tensorkit.TensorkitError:
            pass
        try:
            with tensorkit.open(damaged, verify=False) as f:
                f["t"]
        except tensorkit.TensorkitError:
            pass


def test_tensogram_reads_grib_kept_packed_as_ecmwf_values(testdata, tmp_path):
    """`--pipeline keep`: GRIB simple and CCSDS packing stored as Tensogram simple_packing
    (then szip); tensogram 0.24 decodes ecCodes' values bit for bit."""
    import hashlib
    import json

    for name in ["simple.grib2", "ccsds.grib2", "grib1_simple.grib1"]:
        src = testdata / "grib" / "reference" / name
        out = tmp_path / (src.stem + ".tgm")
        tensorkit.convert(src, out, pipeline="keep")
        sidecar = json.loads(src.with_suffix(".json").read_text())
        _, objects = tensogram.decode(out.read_bytes(), verify_hash=True)
        kept = 0
        for (desc, arr), m in zip(objects, sidecar["messages"], strict=True):
            a = np.asarray(arr).astype("<f8")
            assert hashlib.sha256(a.tobytes()).hexdigest() == m["sha256_nan"], (name, m["keys"])
            kept += desc.encoding == "simple_packing"
        assert kept >= 3, name
