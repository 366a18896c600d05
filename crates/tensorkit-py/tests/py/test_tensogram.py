"""tensorkit.tensogram: tensogram's Python API, checked against tensogram 0.24 itself."""

import json

import ml_dtypes
import numpy as np
import pytest
import tensogram as reference

import tensorkit
from tensorkit import tensogram as tg



def desc(shape, dtype, **pipeline):
    return {"type": "ntensor", "shape": list(shape), "dtype": dtype, **pipeline}


def sample_objects():
    rng = np.random.default_rng(7)
    field = rng.normal(280.0, 10.0, (30, 40))
    return [
        (desc((3, 4), "float32"), np.arange(12, dtype=np.float32).reshape(3, 4)),
        (desc(field.shape, "float64", encoding="simple_packing", sp_bits_per_value=16, compression="szip",
              szip_rsi=128, szip_block_size=16, szip_flags=8), field),
        (desc((50,), "int32", filter="shuffle", shuffle_element_size=4, compression="zstd"), np.arange(-25, 25, dtype=np.int32)),
        (desc((8,), "uint16", compression="lz4"), np.arange(8, dtype=np.uint16) * 1000),
        (desc((4,), "bfloat16"), np.array([1.5, -2.0, 0.25, 3.0], dtype=ml_dtypes.bfloat16)),
        (desc((2,), "complex128"), np.array([1 + 2j, -3.5j])),
    ]


META = {"base": [{"name": f"v{i}", "mars": {"param": i}} for i in range(6)], "centre": "ecmf", "run": [1, 2.5, None, True]}


def assert_same_values(got, want, lossy):
    assert got.shape == want.shape and got.dtype == want.dtype
    if lossy:
        np.testing.assert_allclose(got, want, atol=1e-2)
    else:
        assert got.tobytes() == want.tobytes()


def test_encode_decode_round_trip_with_pipelines_and_metadata():
    objects = sample_objects()
    msg = tg.encode(META, objects)
    meta, decoded = tg.decode(msg, verify_hash=True)
    assert meta.version == 3 and meta.num_objects == 6
    assert meta["centre"] == "ecmf" and meta.extra["run"] == [1, 2.5, None, True]
    assert meta["name"] == "v0" and meta.get_path_at(4, "mars.param") == 4
    assert meta.get_path("mars.param") == 0 and meta.has_path("centre") and not meta.has_path("nope")
    assert meta.reserved["encoder"]["name"] == "tensorkit"
    for (d_in, want), (d, got) in zip(objects, decoded):
        assert d.shape == d_in["shape"] and d.dtype == d_in["dtype"] and d.obj_type == "ntensor"
        assert_same_values(got, want, lossy=d.encoding == "simple_packing")
        assert got.flags.writeable
    d = decoded[1][0]
    assert (d.encoding, d.filter, d.compression) == ("simple_packing", "none", "szip")
    assert d.params["sp_bits_per_value"] == 16 and "sp_reference_value" in d.params
    assert repr(meta).startswith("Metadata(version=3, base_len=6")


def test_what_tensorkit_encodes_tensogram_decodes_and_back():
    objects = sample_objects()
    ours = tg.encode(META, objects)
    # tensogram takes neither complex arrays nor ml_dtypes' bfloat16 (it wants the bits).
    shared = [(d, a.view(np.uint16) if d["dtype"] == "bfloat16" else a) for d, a in objects[:5]]
    theirs = reference.encode({**META, "base": META["base"][:5]}, shared)
    for msg in (ours, theirs):
        ref_meta, ref_objects = reference.decode(msg, verify_hash=True)
        meta, objs = tg.decode(msg, verify_hash=True)
        assert meta.extra == ref_meta.extra
        assert [{k: v for k, v in b.items()} for b in meta.base] == [dict(b) for b in ref_meta.base]
        for (d, got), (rd, want) in zip(objs, ref_objects):
            assert (d.shape, d.dtype, d.encoding, d.compression, d.params) == (
                rd.shape, rd.dtype, rd.encoding, rd.compression, rd.params)
            assert got.tobytes() == want.tobytes()
        assert reference.validate(msg)["issues"] == []
        assert tg.validate(msg) == {"issues": [], "object_count": len(objs), "hash_verified": True}


def test_the_conformance_fixtures_decode_as_tensogram_decodes_them(testdata):
    files = sorted((testdata / "tensogram" / "conformance").glob("*.tgm"))
    assert files
    checked = 0
    for path in files:
        sidecar = json.loads(path.with_suffix(".json").read_text())
        if sidecar.get("expected") == "reject":
            continue
        buf = path.read_bytes()
        assert tg.scan(buf) == reference.scan(buf), path.name
        for offset, length in tg.scan(buf):
            one = buf[offset : offset + length]
            try:
                want = reference.decode(one)
            except Exception:
                continue  # what tensogram cannot read (tensorkit's own beyond-reference objects)
            got = tg.decode(one)
            assert got.metadata.extra == want.metadata.extra, path.name
            for (d, a), (rd, b) in zip(got.objects, want.objects):
                assert d.shape == rd.shape and d.dtype == rd.dtype, path.name
                if d.dtype != "bitmask":
                    assert a.tobytes() == b.tobytes(), path.name
            checked += 1
    assert checked > 10


def test_ranges_decode_as_tensogram_decodes_them(testdata, tmp_path):
    """decode_range reads only what each object's stages need, and gives tensogram's values
    for every conformance object: raw, packed, compressed, masked, big-endian."""
    objects = sample_objects() + [
        (desc((37,), "float64", encoding="simple_packing", sp_bits_per_value=13), np.linspace(250.0, 310.0, 37)),
        (desc((37,), "float32", byte_order="big"), np.arange(37, dtype=">f4")),
    ]
    messages = [tg.encode(META, objects)]
    for path in sorted((testdata / "tensogram" / "conformance").glob("*.tgm")):
        if json.loads(path.with_suffix(".json").read_text()).get("expected") != "reject":
            buf = path.read_bytes()
            messages += [buf[o : o + n] for o, n in tg.scan(buf)]
    checked = 0
    for msg in messages:
        try:
            _, descs = reference.decode_descriptors(msg)
        except Exception:
            continue
        for i, d in enumerate(descs):
            n = int(np.prod(d.shape)) if d.shape else 1
            ranges = [(0, n), (n // 3, n // 3), (max(n - 1, 0), min(n, 1))]
            try:
                want = reference.decode_range(msg, i, ranges)
            except Exception:
                continue  # what tensogram cannot read (bitmask ranges, its missing codecs)
            got = tg.decode_range(msg, i, ranges)
            for a, b in zip(got, want):
                assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), (d.dtype, d.encoding, ranges)
            joined = tg.decode_range(msg, i, ranges, join=True)
            assert joined.tobytes() == np.concatenate(want).tobytes()
            # In the stored byte order: the same values, labelled with that order (as
            # decode(native_byte_order=False) labels them; tensogram labels them native).
            _, _, whole = tg.decode_object(msg, i, native_byte_order=False)
            for a, b in zip(tg.decode_range(msg, i, ranges, native_byte_order=False), want):
                assert a.dtype == whole.dtype and a.astype(b.dtype).tobytes() == b.tobytes()
            checked += 1
    assert checked > 20
    # The same from a file, read where it is mapped.
    path = tmp_path / "ranges.tgm"
    path.write_bytes(messages[0])
    with tg.TensogramFile.open(str(path)) as f:
        for i in range(len(objects)):
            assert [a.tobytes() for a in f.file_decode_range(0, i, [(1, 1), (0, 1)])] == [
                a.tobytes() for a in tg.decode_range(messages[0], i, [(1, 1), (0, 1)])
            ]
    assert tg.decode_range(messages[0], 0, []) == []
    assert tg.decode_range(messages[0], 0, [], join=True).dtype == np.float32


def test_objects_descriptors_metadata_and_ranges_without_decoding_everything():
    objects = sample_objects()
    msg = tg.encode(META, objects)
    meta = tg.decode_metadata(msg)
    assert meta.keys()[:2] == ["mars", "name"] and "centre" in meta
    meta, descs = tg.decode_descriptors(msg)
    assert [d.dtype for d in descs] == ["float32", "float64", "int32", "uint16", "bfloat16", "complex128"]
    meta, d, arr = tg.decode_object(msg, 2, verify_hash=True)
    assert d.filter == "shuffle" and arr.tolist() == list(range(-25, 25))
    parts = tg.decode_range(msg, 2, [(0, 2), (48, 2)])
    assert [p.tolist() for p in parts] == [[-25, -24], [23, 24]]
    assert tg.decode_range(msg, 2, [(0, 2), (48, 2)], join=True).tolist() == [-25, -24, 23, 24]
    with pytest.raises(ValueError, match="object 9 is out of range"):
        tg.decode_object(msg, 9)
    with pytest.raises(ValueError, match="outside"):
        tg.decode_range(msg, 2, [(49, 2)])


def test_scan_iterate_and_hash_like_tensogram():
    a = tg.encode({}, [(desc((2,), "float64"), np.array([1.0, 2.0]))])
    b = tg.encode({"base": [{"name": "b"}]}, [(desc((1,), "int8"), np.array([7], np.int8))])
    buf = b"junk" + a + b"\x00" * 3 + b
    assert tg.scan(buf) == reference.scan(buf) == [(4, len(a)), (7 + len(a), len(b))]
    msgs = list(tg.iter_messages(buf, verify_hash=True))
    assert [m.objects[0][1].tolist() for m in msgs] == [[1.0, 2.0], [7]]
    assert msgs[1].metadata["name"] == "b"
    assert tg.compute_hash(b"abc") == reference.compute_hash(b"abc") == "78af5f94892f3950"


def test_byte_order_nan_bitmask_and_raw_bytes():
    values = np.array([1.5, -2.25, 3.0], dtype=">f4")
    msg = tg.encode({}, [(desc((3,), "float32", byte_order="big"), values)])
    assert reference.decode(msg).objects[0][1].tolist() == [1.5, -2.25, 3.0]
    native = tg.decode(msg).objects[0][1]
    assert native.dtype == np.float32 and native.tolist() == [1.5, -2.25, 3.0]
    stored = tg.decode(msg, native_byte_order=False).objects[0][1]
    assert stored.dtype == np.dtype(">f4") and stored.tolist() == [1.5, -2.25, 3.0]
    # Native-order values under a big-endian label are converted by value.
    msg = tg.encode({}, [(desc((3,), "float32", byte_order="big"), values.astype("<f4"))])
    assert tg.decode(msg).objects[0][1].tolist() == [1.5, -2.25, 3.0]

    with_nan = np.array([1.0, np.nan, np.inf, 4.0])
    with pytest.raises(ValueError, match="nan"):
        tg.encode({}, [(desc((4,), "float64"), with_nan)])
    msg = tg.encode({}, [(desc((4,), "float64"), with_nan)], allow_nan=True, allow_inf=True)
    got = tg.decode(msg).objects[0][1]
    assert np.array_equal(got, with_nan, equal_nan=True)
    assert np.array_equal(reference.decode(msg).objects[0][1], with_nan, equal_nan=True)

    mask = np.array([True, False, True, True, False, False, True, False, True, True])
    msg = tg.encode({}, [(desc((10,), "bitmask"), mask)])
    assert tg.decode(msg).objects[0][1].tolist() == mask.tolist()

    raw = np.arange(4, dtype=np.int16)
    msg = tg.encode({}, [(desc((4,), "int16"), raw.tobytes())], hash=None)
    assert tg.decode(msg).objects[0][1].tolist() == [0, 1, 2, 3]
    with pytest.raises(tensorkit.MissingHashError):
        tg.decode(msg, verify_hash=True)


def test_a_damaged_message_is_never_decoded_as_sound():
    objects = sample_objects()
    msg = bytearray(tg.encode(META, objects))
    first = objects[0][1].tobytes()
    msg[msg.index(first) + 5] ^= 0x01  # inside object 0's payload
    with pytest.raises(tg.HashMismatchError):
        tg.decode(bytes(msg), verify_hash=True)
    with pytest.raises(tg.IntegrityError):
        tg.decode(bytes(msg), verify_hash=True)
    report = tg.validate(bytes(msg))
    assert not report["hash_verified"]
    assert any(i["code"] == "hash_mismatch" and i["level"] == "integrity" for i in report["issues"])
    assert tg.validate(bytes(msg), level="quick")["issues"] == []
    with pytest.raises(ValueError, match="unknown validation level"):
        tg.validate(bytes(msg), level="thorough")


def test_hostile_messages_raise_tensorkit_errors(testdata):
    files = sorted((testdata / "tensogram" / "conformance" / "bad").glob("*.tgm"))
    assert files
    for path in files:
        buf = path.read_bytes()
        with pytest.raises(tensorkit.TensorkitError):
            tg.decode(buf, verify_hash=True)
        assert tg.validate(buf, level="full")["issues"], path.name
        for cut in range(0, len(buf), max(1, len(buf) // 40)):
            try:
                tg.decode(buf[:cut])
            except tensorkit.TensorkitError:
                pass


def test_files_create_append_open_index_and_validate(tmp_path):
    path = tmp_path / "forecast.tgm"
    with tg.TensogramFile.create(path) as f:
        for step in range(3):
            objects = [(desc((2, 2), "float32"), np.full((2, 2), step, np.float32))]
            f.append({"base": [{"step": step}]}, objects, fsync=step == 1)
        assert len(f) == 3
    with tg.TensogramFile.open(path) as f:
        assert len(f) == f.message_count() == 3 and f.source() == str(path)
        assert [m.metadata["step"] for m in f] == [0, 1, 2]
        assert f[-1].objects[0][1].tolist() == [[2.0, 2.0], [2.0, 2.0]]
        assert [m.metadata["step"] for m in f[0:2]] == [0, 1]
        with pytest.raises(IndexError, match="out of range"):
            f[3]
        assert f.read_message(1) == f.messages()[1]
        assert tg.decode(f.read_message(1)).metadata["step"] == 1
        assert f.file_decode_metadata(2)["step"] == 2
        assert f.file_decode_descriptors(0)["descriptors"][0].shape == [2, 2]
        assert f.file_decode_object(1, 0, verify_hash=True)["data"].sum() == 4
        assert f.file_decode_range(2, 0, [(1, 2)], join=True).tolist() == [2.0, 2.0]
    ref = reference.TensogramFile.open(str(path))
    assert len(ref) == 3 and ref.decode_message(2).metadata["step"] == 2
    with pytest.raises(ValueError, match="closed"):
        len(f)

    assert tg.validate_file(path) == {"file_issues": [], "messages": [{"issues": [], "object_count": 1, "hash_verified": True}] * 3}
    data = path.read_bytes()
    n = len(data) // 3
    path.write_bytes(data[:n] + b"garbage!" + data[n:])
    report = tg.validate_file(path)
    assert [(i["byte_offset"], i["length"]) for i in report["file_issues"]] == [(n, 8)]
    assert len(report["messages"]) == 3


def _t2m():
    return np.linspace(250.0, 300.0, 64, dtype=np.float64)


def test_compute_packing_params_match_the_references_and_pack_what_the_encoder_packs():
    values = _t2m()
    ours = tg.compute_packing_params(values, 16, 0)
    assert ours == reference.compute_packing_params(values, 16, 0)
    desc = {"type": "ntensor", "shape": [64], "dtype": "float64", "encoding": "simple_packing", **ours}
    pinned = tg.decode(tg.encode({"version": 3}, [(desc, values)]))
    auto = tg.decode(tg.encode({"version": 3}, [({**desc, "sp_bits_per_value": 16}, values)]))
    np.testing.assert_array_equal(pinned.objects[0][1], auto.objects[0][1])
    with pytest.raises(ValueError, match="inf"):
        tg.compute_packing_params(np.array([1.0, np.inf]), 16, 0)


def test_streaming_encoder_writes_what_the_reference_reads():
    meta = {"version": 3, "base": [{"name": "a"}, {"name": "b"}]}
    desc = {"type": "ntensor", "shape": [4], "dtype": "float32"}
    enc = tg.StreamingEncoder(meta)
    enc.write_object(desc, np.arange(4, dtype=np.float32))
    enc.write_object({**desc, "compression": "zstd"}, np.ones(4, dtype=np.float32))
    assert enc.object_count == 2
    first = enc.finish_and_reset()
    # Streaming mode: the length is not in the preamble; backfilled, it is.
    assert int.from_bytes(first[16:24], "big") == 0
    enc.write_object(desc, np.zeros(4, dtype=np.float32))
    enc.write_object(desc, np.zeros(4, dtype=np.float32))
    second = enc.finish_backfilled()
    assert int.from_bytes(second[16:24], "big") == len(second)
    with pytest.raises(RuntimeError, match="already finished"):
        enc.finish()
    for msg, want in ((first, [np.arange(4), np.ones(4)]), (second, [np.zeros(4)] * 2)):
        ref = reference.decode(msg, verify_hash=True)
        for (_, got), w in zip(ref.objects, want):
            np.testing.assert_array_equal(got, w.astype(np.float32))
    assert len(tg.iter_messages(first + second)) == 2


def test_encode_pre_encoded_frames_payloads_as_they_are_and_checks_what_it_can():
    arr = np.arange(10, dtype=np.float32)
    desc = {"type": "ntensor", "shape": [10], "dtype": "float32", "byte_order": "little"}
    msg = tg.encode_pre_encoded({"version": 3}, [(desc, arr.astype("<f4").tobytes())])
    np.testing.assert_array_equal(reference.decode(msg, verify_hash=True).objects[0][1], arr)
    np.testing.assert_array_equal(tg.decode(msg).objects[0][1], arr)
    for wrong in (b"\0" * 20, b"\0" * 44):
        with pytest.raises(ValueError, match="does not match expected 40 payload bytes"):
            tg.encode_pre_encoded({"version": 3}, [(desc, wrong)])
    with pytest.raises(ValueError, match="szip_block_offsets provided but compression"):
        tg.encode_pre_encoded({"version": 3}, [({**desc, "szip_block_offsets": [0, 80]}, b"\0" * 40)])
    with pytest.raises(tensorkit.InvalidArgumentError, match="requires bytes"):
        tg.encode_pre_encoded({"version": 3}, [(desc, arr)])


def test_errors_name_tensograms_class_and_carry_the_object():
    msg = tg.encode({"version": 3}, [({"type": "ntensor", "shape": [2], "dtype": "float32"}, np.zeros(2, np.float32))], hash=None)
    with pytest.raises(tg.MissingHashError) as e:
        tg.decode(msg, verify_hash=True)
    assert str(e.value).startswith("MissingHash: ") and e.value.object_index == 0
    with pytest.raises(ValueError, match="^FramingError: "):
        tg.decode(b"not a message at all, just bytes")
    meta = tg.decode_metadata(tg.encode({"version": 3, "base": [{"name": "t"}], "source": "x"}, [({"type": "ntensor", "shape": [1], "dtype": "uint8"}, np.zeros(1, np.uint8))]))
    assert meta.items() == list(zip(meta.keys(), meta.values()))
    assert meta.get_path("extra.source") == "x" and not meta.has_path_at(0, "_reserved_") and not meta.has_path_at(9, "name")


def test_metadata_in_a_descriptor_warns_once_per_descriptor_at_the_callers_line():
    import warnings

    desc = {"type": "ntensor", "shape": [1], "dtype": "uint8", "name": "t2m", "units": "K"}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        msg = tg.encode({"version": 3}, [(desc, np.zeros(1, np.uint8)), (dict(desc), np.zeros(1, np.uint8))])
    warned = [w for w in caught if issubclass(w.category, UserWarning)]
    assert len(warned) == 2 and "'name', 'units'" in str(warned[0].message)
    assert warned[0].filename == __file__
    assert tg.decode(msg).objects[0][0].params["name"] == "t2m"


def test_doctor_has_the_references_shape_and_every_round_trip_passes():
    ours, theirs = tg.doctor(), reference.doctor()
    assert set(ours) == set(theirs) == {"build", "features", "self_test"}
    assert set(ours["build"]) == set(theirs["build"]) and ours["build"]["wire_version"] == tg.WIRE_VERSION
    for row in ours["features"]:
        assert row["kind"] in {"compression", "threading", "io", "converter"}
        assert set(row) == ({"name", "kind", "state", "backend", "linkage"} if row["state"] == "on" else {"name", "kind", "state"})
    ours_codecs = {r["name"] for r in ours["features"] if r["kind"] == "compression" and r["state"] == "on"}
    theirs_codecs = {r["name"] for r in theirs["features"] if r["kind"] == "compression" and r["state"] == "on"}
    assert theirs_codecs <= ours_codecs | {"zfp", "sz3"}, (theirs_codecs, ours_codecs)
    assert all(r["outcome"] == "ok" for r in ours["self_test"]), ours["self_test"]
    assert any(r["label"] == "none/none/none" for r in ours["self_test"])


def test_decode_with_masks_gives_the_stored_payload_and_each_masks_elements():
    data = np.array([np.nan, 1.0, np.inf, 2.0, -np.inf], dtype=np.float64)
    desc = {"type": "ntensor", "shape": [5], "dtype": "float64"}
    msg = tg.encode({"version": 3}, [(desc, data), (desc, np.ones(5))], allow_nan=True, allow_inf=True, small_mask_threshold_bytes=0)
    decoded = tg.decode_with_masks(msg)
    _, payload, masks = decoded.objects[0]
    np.testing.assert_array_equal(payload, [0.0, 1.0, 0.0, 2.0, 0.0])
    assert {k: list(v) for k, v in masks.items()} == {
        "nan": [True, False, False, False, False],
        "inf+": [False, False, True, False, False],
        "inf-": [False, False, False, False, True],
    }
    assert decoded.objects[1][2] == {}
    c = np.array([complex(np.nan, 0), complex(1, np.inf), 2 + 0j], dtype=np.complex128)
    cmsg = tg.encode({"version": 3}, [({"type": "ntensor", "shape": [3], "dtype": "complex128"}, c)], allow_nan=True, allow_inf=True, small_mask_threshold_bytes=0)
    cm = tg.decode_with_masks(cmsg).objects[0][2]
    assert list(cm["nan"]) == [True, False, False] and list(cm["inf+"]) == [False, True, False]


def test_extra_is_tensograms_name_for_extra_and_messages_say_what_users_match_on():
    desc = {"type": "ntensor", "shape": [1], "dtype": "uint8"}
    msg = tg.encode({"version": 3, "extra": {"source": "era5", "run": 1}, "_extra_": {"run": 2}}, [(desc, np.zeros(1, np.uint8))])
    meta = reference.decode_metadata(msg)
    assert meta.extra["source"] == "era5" and meta.extra["run"] == 2
    with pytest.raises(ValueError, match="'extra' must be a dict"):
        tg.encode({"version": 3, "extra": "era5"}, [(desc, np.zeros(1, np.uint8))])
    with pytest.raises(ValueError, match="unknown hash type"):
        tg.compute_hash(b"x", "md5")
    with pytest.raises(ValueError, match="infinite value"):
        tg.compute_packing_params(np.array([1.0, -np.inf]), 16, 0)
    with pytest.raises(ValueError, match="unknown byte_order"):
        tg.encode({"version": 3}, [({**desc, "byte_order": "middle"}, np.zeros(1, np.uint8))])
    with pytest.raises(ValueError, match="does not match"):
        tg.encode({"version": 3}, [({"type": "ntensor", "shape": [5, 5], "dtype": "float32"}, b"\0" * 40)])


def test_what_tensogram_0_24_s_own_suite_pins_holds_here_too():
    desc = {"type": "ntensor", "shape": [4], "dtype": "float32"}
    data = np.ones(4, np.float32)
    # An explicit `_extra_` entry wins over a free-form top-level key of the same name.
    for module in (tg, reference):
        meta, _ = module.decode(tg.encode({"version": 99, "_extra_": {"version": 1}}, [(desc, data)]))
        assert meta.extra["version"] == 1
    # compute_hash takes bytes, never a buffer whose bytes could be in doubt.
    with pytest.raises(TypeError):
        tg.compute_hash(memoryview(b"abc"))
    with pytest.raises(TypeError):
        tg.compute_hash(data)
    assert tg.compute_hash(bytearray(b"abc")) == reference.compute_hash(b"abc")
    # A NaN no mask records fails full validation, and so nothing counts as verified.
    nan = tg.encode_pre_encoded({"version": 3}, [({"type": "ntensor", "shape": [2], "dtype": "float64"}, np.array([1.0, np.nan]).tobytes())])
    for module in (tg, reference):
        report = module.validate(nan, level="full")
        assert [(i["code"], i["severity"]) for i in report["issues"]] == [("nan_detected", "error")]
        assert report["hash_verified"] is False
    with pytest.raises(ValueError, match="unknown dtype"):
        tg.encode_pre_encoded({"version": 3}, [({**desc, "dtype": "complex256"}, b"\0" * 16)])
    with pytest.raises(ValueError, match="simple_packing only supports float64"):
        tg.encode({"version": 3}, [({**desc, "encoding": "simple_packing", "sp_bits_per_value": 8}, data)])
