"""GGUF against gguf-py 0.19.0, the reference: every file gguf-py wrote reads with the same
metadata and tensors (quantized ones dequantized bit for bit as `gguf.quants.dequantize`,
or as their stored blocks with ``raw=True``), and what tensorkit writes, `GGUFReader`
reads back with the same values and metadata."""

import json

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")

import tensorkit  # noqa: E402

DENSE = {
    gguf.GGMLQuantizationType.F32,
    gguf.GGMLQuantizationType.F16,
    gguf.GGMLQuantizationType.F64,
    gguf.GGMLQuantizationType.I8,
    gguf.GGMLQuantizationType.I16,
    gguf.GGMLQuantizationType.I32,
    gguf.GGMLQuantizationType.I64,
}


def files(testdata):
    return sorted((testdata / "gguf" / "reference").glob("*.gguf"))


def reference_metadata(reader):
    out = {}
    for key, field in reader.fields.items():
        if key.startswith("GGUF."):
            continue
        value = field.contents()
        if field.types[0] == gguf.GGUFValueType.ARRAY and len(field.types) > 2:
            continue  # nested arrays: gguf-py's contents() flattens them
        out[key] = value
    return out


def test_every_reference_file_reads_as_gguf_py_reads_it(testdata):
    paths = files(testdata)
    assert len(paths) >= 10
    # A shard opens its whole set: see test_a_shard_opens_its_whole_set.
    for path in [p for p in paths if not p.name.startswith("split-")]:
        reader = gguf.GGUFReader(path)
        f = tensorkit.open(path)
        assert f.format == "gguf"
        ours = f.metadata
        for key, value in reference_metadata(reader).items():
            theirs = value
            if isinstance(theirs, float):
                assert ours[key] == pytest.approx(theirs, rel=0, abs=0), (path.name, key)
            else:
                assert ours[key] == theirs, (path.name, key)
        assert list(f) == [t.name for t in reader.tensors], path.name
        for t in reader.tensors:
            shape = tuple(int(d) for d in reversed(t.shape.tolist()))
            ours = f[t.name]
            assert ours.shape == shape, (path.name, t.name)
            if t.tensor_type in DENSE:
                expected = np.asarray(t.data).astype(ours.dtype)
            elif t.tensor_type == gguf.GGMLQuantizationType.BF16:
                # bfloat16 for us (ml_dtypes); blocks gguf-py dequantizes to float32.
                assert str(ours.dtype) == "bfloat16"
                ours = ours.astype(np.float32)
                # gguf-py hands BF16 out as bytes and dequantizes them as native words; a
                # big-endian file's are big-endian words (its endian converter swaps them).
                words = np.asarray(t.data).view(np.dtype(np.uint16).newbyteorder(reader.byte_order))
                native = np.ascontiguousarray(words.astype(np.uint16)).view(np.uint8)
                expected = gguf.quants.dequantize(native, t.tensor_type)
            else:
                expected = gguf.quants.dequantize(np.asarray(t.data), t.tensor_type)
                assert ours.dtype == np.float32
            assert ours.tobytes() == np.ascontiguousarray(expected).reshape(shape).tobytes(), (
                path.name,
                t.name,
                t.tensor_type.name,
            )


def test_a_shard_opens_its_whole_set(testdata):
    src = testdata / "gguf" / "reference"
    readers = [gguf.GGUFReader(src / f"split-0000{i}-of-00003.gguf") for i in (1, 2, 3)]
    f = tensorkit.open(src / "split-00003-of-00003.gguf", raw=True)
    assert list(f) == [t.name for r in readers for t in r.tensors]
    for r in readers:
        for t in r.tensors:
            assert f[t.name].tobytes() == np.asarray(t.data).tobytes()
    assert f.metadata["general.name"] == "tiny test model"
    assert f.metadata["split.count"] == 0


def test_raw_gives_the_stored_blocks(testdata):
    path = testdata / "gguf" / "reference" / "quantized.gguf"
    reader = gguf.GGUFReader(path)
    f = tensorkit.open(path, raw=True)
    for t in reader.tensors:
        blocks = f[t.name]
        assert blocks.dtype == np.uint8 and not blocks.flags.writeable
        assert blocks.tobytes() == np.asarray(t.data).tobytes(), t.name
        info = f.info(t.name)
        assert info["encoding"] == t.tensor_type.name
        assert info["element_shape"] == tuple(int(d) for d in reversed(t.shape.tolist()))
        assert blocks.shape == tuple(np.asarray(t.data).shape)


def test_what_we_write_gguf_py_reads(tmp_path):
    rng = np.random.default_rng(7)
    tensors = {
        "w": rng.standard_normal((4, 64)).astype(np.float32),
        "h": rng.standard_normal((3, 5)).astype(np.float16),
        "d": np.arange(6, dtype=np.float64).reshape(2, 3),
        "i": np.array([-3, 4], dtype=np.int32),
        "b": np.arange(4, dtype=np.int8),
    }
    metadata = {
        "general.architecture": "llama",
        "llama.context_length": 2048,
        "llama.rope.freq_base": 0.5,
        "tokenizer.ggml.tokens": ["a", "b", "c"],
        "flag": True,
    }
    out = tmp_path / "model.gguf"
    tensorkit.save(out, tensors, metadata=metadata)
    reader = gguf.GGUFReader(out)
    got = reference_metadata(reader)
    assert got == metadata
    assert reader.fields["llama.context_length"].types == [gguf.GGUFValueType.INT32]
    assert reader.fields["llama.rope.freq_base"].types == [gguf.GGUFValueType.FLOAT32]
    for t in reader.tensors:
        shape = tuple(int(d) for d in reversed(t.shape.tolist()))
        np.testing.assert_array_equal(np.asarray(t.data).reshape(shape), tensors[t.name])


def test_converting_keeps_quantized_blocks_and_metadata_types(testdata, tmp_path):
    src = testdata / "gguf" / "reference" / "model.gguf"
    out = tmp_path / "again.gguf"
    tensorkit.convert(src, out)
    assert out.read_bytes() == src.read_bytes()
    st = tmp_path / "model.safetensors"
    tensorkit.convert(src, st)
    f = tensorkit.open(st)
    reader = gguf.GGUFReader(src)
    for t in reader.tensors:
        if t.tensor_type not in DENSE:
            np.testing.assert_array_equal(
                f[t.name].ravel(), gguf.quants.dequantize(np.asarray(t.data), t.tensor_type).ravel()
            )
    # Non-string values travel as their JSON text in string-only metadata.
    assert f.metadata["general.file_type"] == "15"


def test_a_damaged_file_is_an_error_of_its_kind(testdata):
    d = testdata / "gguf" / "reference" / "malformed"
    for path in sorted(d.glob("*.gguf")):
        with pytest.raises(tensorkit.TensorkitError):
            f = tensorkit.open(path)
            f.load()


def test_merging_a_split_set_gives_what_gguf_split_gives(testdata, tmp_path):
    """gguf-split --merge keeps the first shard's metadata with split.count set to 0: the
    same file gguf-py writes from the model's metadata, those three keys and its tensors."""
    src = testdata / "gguf" / "reference"
    merged = tmp_path / "merged.gguf"
    tensorkit.convert(src / "split-00002-of-00003.gguf", merged)
    model = gguf.GGUFReader(src / "model.gguf")
    expected = tmp_path / "expected.gguf"
    w = gguf.GGUFWriter(expected, model.fields["general.architecture"].contents())
    for key, field in model.fields.items():
        if key.startswith("GGUF.") or key == "general.architecture":
            continue
        sub = field.types[-1] if field.types[0] == gguf.GGUFValueType.ARRAY else None
        w.add_key_value(key, field.contents(), field.types[0], sub_type=sub)
    w.add_key_value("split.no", 0, gguf.GGUFValueType.UINT16)
    w.add_key_value("split.count", 0, gguf.GGUFValueType.UINT16)
    w.add_key_value("split.tensors.count", 8, gguf.GGUFValueType.INT32)
    for t in model.tensors:
        w.add_tensor(t.name, np.asarray(t.data), raw_dtype=t.tensor_type)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    assert merged.read_bytes() == expected.read_bytes()


@pytest.mark.parametrize("qtype", ["Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1"])
def test_quantize_gives_gguf_py_blocks(tmp_path, qtype):
    rng = np.random.default_rng(11)
    weights = {
        "w": (rng.standard_normal((6, 128)) * 0.3).astype(np.float32),
        "zeros": np.zeros((2, 64), dtype=np.float32),
        "h": (rng.standard_normal((4, 64))).astype(np.float16),
        "norm": np.ones(64, dtype=np.float32),
        "odd": np.ones((2, 48), dtype=np.float32),
    }
    out = tmp_path / "q.gguf"
    notes = tensorkit.save(out, weights, quantize=qtype)
    assert any("norm" in n and "odd" in n for n in notes)
    reader = gguf.GGUFReader(out)
    t = {x.name: x for x in reader.tensors}
    q = gguf.GGMLQuantizationType[qtype]
    for name in ("w", "zeros", "h"):
        assert t[name].tensor_type == q
        expected = gguf.quants.quantize(weights[name].astype(np.float32), q)
        assert np.asarray(t[name].data).tobytes() == expected.tobytes(), name
    assert t["norm"].tensor_type == gguf.GGMLQuantizationType.F32
    assert t["odd"].tensor_type == gguf.GGMLQuantizationType.F32
    with pytest.raises(tensorkit.TensorkitError):
        tensorkit.save(tmp_path / "q.safetensors", weights, quantize=qtype)


def test_dequantize_to_half_floats_or_raw_blocks_and_back(testdata, tmp_path):
    src = testdata / "gguf" / "reference" / "model.gguf"
    reader = gguf.GGUFReader(src)
    quantized = [t for t in reader.tensors if t.tensor_type not in DENSE]
    for how, dtype in (("float16", np.float16), ("bfloat16", None)):
        out = tmp_path / f"{how}.safetensors"
        tensorkit.convert(src, out, dequantize=how)
        f = tensorkit.open(out)
        for t in quantized:
            want = gguf.quants.dequantize(np.asarray(t.data), t.tensor_type)
            got = f[t.name]
            assert str(got.dtype) == how
            # Random blocks reach past float16's range: both round those to infinity.
            with np.errstate(over="ignore"):
                narrowed = want.astype(dtype if dtype is not None else got.dtype)
            assert got.tobytes() == narrowed.tobytes(), t.name
    raw = tmp_path / "raw.safetensors"
    tensorkit.convert(src, raw, dequantize="raw")
    f = tensorkit.open(raw)
    recorded = json.loads(f.metadata["gguf.raw_blocks"])
    for t in quantized:
        assert f[t.name].dtype == np.uint8
        assert f[t.name].tobytes() == np.asarray(t.data).tobytes()
        assert recorded[t.name]["type"] == t.tensor_type.name
    back = tmp_path / "back.gguf"
    tensorkit.convert(raw, back)
    again = {t.name: t for t in gguf.GGUFReader(back).tensors}
    assert "gguf.raw_blocks" not in gguf.GGUFReader(back).fields
    for t in quantized:
        assert again[t.name].tensor_type == t.tensor_type
        assert np.asarray(again[t.name].data).tobytes() == np.asarray(t.data).tobytes()


@pytest.mark.parametrize("qtype", ["Q4_K", "Q6_K"])
def test_k_quantization_reads_back_close_in_gguf_py(tmp_path, qtype):
    """gguf-py makes no K blocks; ours (ggml's reference quantizers) read back in gguf-py
    within the error the type allows."""
    rng = np.random.default_rng(5)
    w = (rng.standard_normal((8, 512)) * 0.05).astype(np.float32)
    out = tmp_path / "k.gguf"
    tensorkit.save(out, {"w": w}, quantize=qtype)
    t = gguf.GGUFReader(out).tensors[0]
    assert t.tensor_type == gguf.GGMLQuantizationType[qtype]
    back = gguf.quants.dequantize(np.asarray(t.data), t.tensor_type).reshape(w.shape)
    rel = np.abs(back - w).max() / np.abs(w).max()
    assert rel < (0.08 if qtype == "Q4_K" else 0.02), rel
