"""Writes GGUF files with gguf-py (llama.cpp's Python package), each with a JSON sidecar:
the version, byte order and alignment `GGUFReader` reads, every metadata key with its value
type and value, and every tensor's ggml type, numpy-order shape, data offset and the SHA-256
of its stored bytes and of what `gguf.quants.dequantize` makes of them (float32,
little-endian).

    python -m venv env && env/bin/pip install gguf==0.19.0 numpy==2.4.6
    env/bin/python scripts/reference/gguf_files.py testdata/gguf/reference

Files:
- ``metadata``: every metadata value type, arrays of each, an array of strings, nested
  arrays, unicode keys and values, extreme integers.
- ``dense``: every dense ggml type (F32, F16, BF16, F64, I8, I16, I32, I64), 1 to 4
  dimensions, a scalar-like one-element tensor.
- ``quantized``: every quantized type gguf-py dequantizes. Types it can also quantize
  (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, TQ1_0, TQ2_0, MXFP4) hold values it quantized; the others
  hold random blocks (scales kept finite), which is what a dequantizer must take.
- ``aligned_64``, ``aligned_1``: ``general.alignment`` other than 32.
- ``big_endian``: written with ``endianess=BIG`` (dense tensors byte-swapped, header too).
- ``v2``: the ``dense`` file with its version field set to 2 (the v2 layout is v3's;
  gguf-py writes only v3 and reads both).
- ``model``: a model-like file (llama keys, a tokenizer vocabulary, Q4_K/Q6_K/Q8_0/F32).
- ``split-0000N-of-00003``: the model written with ``split_max_tensors=3`` (the same
  tensors and metadata, so that splitting ``model`` gives these bytes).
- ``malformed/*``: damaged copies of ``dense`` and ``metadata``, each sidecar saying which
  error kind a reader must report (and what `GGUFReader` did with it).
"""

import hashlib
import importlib.metadata
import json
import shutil
import struct
import sys
from pathlib import Path

import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q, GGUFValueType as V

VERSION = importlib.metadata.version("gguf")
RNG = np.random.default_rng(20261126)

DEQUANTIZED = [
    Q.Q4_0, Q.Q4_1, Q.Q5_0, Q.Q5_1, Q.Q8_0, Q.Q2_K, Q.Q3_K, Q.Q4_K, Q.Q5_K, Q.Q6_K,
    Q.TQ1_0, Q.TQ2_0, Q.MXFP4, Q.NVFP4, Q.IQ2_XXS, Q.IQ2_XS, Q.IQ2_S, Q.IQ3_XXS,
    Q.IQ3_S, Q.IQ1_S, Q.IQ1_M, Q.IQ4_NL, Q.IQ4_XS,
]
QUANTIZED_BY_GGUF_PY = {Q.Q4_0, Q.Q4_1, Q.Q5_0, Q.Q5_1, Q.Q8_0, Q.TQ1_0, Q.TQ2_0, Q.MXFP4}


def sha(b):
    return hashlib.sha256(bytes(b)).hexdigest()


def plain(v):
    if isinstance(v, (bytes, bytearray)):
        return v.decode("utf-8")
    if isinstance(v, float):
        return v
    return v


def describe(path):
    r = gguf.GGUFReader(path)
    fields = []
    for key, f in r.fields.items():
        if key.startswith("GGUF."):
            continue
        entry = {"key": key, "type": f.types[0].name}
        if f.types[0] == V.ARRAY:
            entry["item_types"] = [t.name for t in f.types[1:]]
            if len(f.types) == 2:
                entry["value"] = [plain(x) for x in f.contents()]
            else:
                entry["value"] = None  # nested: checked byte for byte by the trials
        else:
            entry["value"] = plain(f.contents())
        fields.append(entry)
    tensors = []
    for t in r.tensors:
        raw = np.asarray(t.data)
        shape = [int(x) for x in reversed(t.shape.tolist())]
        entry = {
            "name": t.name,
            "type": t.tensor_type.name,
            "shape": shape,
            "offset": int(t.data_offset),
            "n_bytes": int(t.n_bytes),
            "raw_sha256": sha(raw.tobytes()),
        }
        if t.tensor_type == Q.BF16:
            # `dequantize` views the words as native: a big-endian file's are swapped first.
            words = raw.view(np.dtype(np.uint16).newbyteorder(r.byte_order))
            values = gguf.quants.dequantize(words.astype("<u2").view(np.uint8), Q.BF16)
            entry["float32_sha256"] = sha(values.astype("<f4").tobytes())
        elif t.tensor_type in DEQUANTIZED:
            values = gguf.quants.dequantize(raw, t.tensor_type).astype("<f4")
            entry["float32_sha256"] = sha(values.tobytes())
        elif t.tensor_type in (Q.F16, Q.F32, Q.F64, Q.I8, Q.I16, Q.I32, Q.I64):
            # `dequantize` views the bytes as native floats, dropping a big-endian file's
            # byte order; numpy's conversion keeps it.
            entry["float32_sha256"] = sha(raw.astype("<f4").tobytes())
        tensors.append(entry)
    return {
        "writer": f"gguf {VERSION}",
        "version": int(r.fields["GGUF.version"].parts[0][0]),
        "byte_order": "big" if r.byte_order == "S" else "little",
        "alignment": int(r.alignment),
        "data_offset": int(r.data_offset),
        "metadata": fields,
        "tensors": tensors,
    }


def finish(path):
    side = path.with_suffix(".json")
    side.write_text(json.dumps(describe(path), indent=1, ensure_ascii=False) + "\n")


def write(path, build, **kw):
    w = gguf.GGUFWriter(path, "tensorkit-test", **kw)
    build(w)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def metadata_file(w):
    w.add_uint8("t.u8", 255)
    w.add_int8("t.i8", -128)
    w.add_uint16("t.u16", 65535)
    w.add_int16("t.i16", -32768)
    w.add_uint32("t.u32", 4294967295)
    w.add_int32("t.i32", -2147483648)
    w.add_float32("t.f32", 0.1)
    w.add_bool("t.bool_true", True)
    w.add_bool("t.bool_false", False)
    w.add_string("t.str", "héllo, wörld ✓")
    w.add_string("t.empty_str", "")
    w.add_uint64("t.u64", 18446744073709551615)
    w.add_int64("t.i64", -9223372036854775808)
    w.add_float64("t.f64", -1.5e300)
    for vt, vals in [
        (V.UINT8, [0, 1, 255]), (V.INT8, [-1, 2]), (V.UINT16, [7]), (V.INT16, [-7, 8]),
        (V.UINT32, [1, 2, 3]), (V.INT32, [-1, 0, 1]), (V.FLOAT32, [0.5, -2.25]),
        (V.BOOL, [True, False, True]), (V.UINT64, [2**64 - 1]), (V.INT64, [-(2**63)]),
        (V.FLOAT64, [1e-300, 3.5]), (V.STRING, ["a", "", "ünïcode", "x" * 40]),
    ]:
        w.add_key_value(f"arr.{vt.name.lower()}", vals, V.ARRAY, sub_type=vt)
    w.add_key_value("arr.nested", [[1, 2], [3], [4, 5, 6]], V.ARRAY, sub_type=V.ARRAY)
    w.add_key_value("arr.nested_str", [["a", "b"], ["c"]], V.ARRAY, sub_type=V.ARRAY)
    w.add_string("ключ.ünicode", "значение")
    w.add_tensor("one", np.arange(4, dtype=np.float32))


def dense_file(w):
    w.add_tensor("f32", (np.arange(24, dtype=np.float32) / 7).reshape(2, 3, 4))
    w.add_tensor("f16", (np.arange(10, dtype=np.float16) - 3.5).reshape(5, 2))
    w.add_tensor("f64", np.array([1.5, -2.0, np.pi, 1e300]))
    w.add_tensor("i8", np.array([-128, 0, 127], dtype=np.int8))
    w.add_tensor("i16", np.arange(6, dtype=np.int16).reshape(1, 2, 3) * -1000)
    w.add_tensor("i32", np.array([[-(2**31), 2**31 - 1]], dtype=np.int32))
    w.add_tensor("i64", np.arange(16, dtype=np.int64).reshape(2, 2, 2, 2) - 2**40)
    bf = (np.arange(8, dtype=np.float32) * 1.25 - 3).view(np.uint32) >> 16
    # Passed as 16-bit words, so a big-endian writer swaps them as gguf-py's endian
    # converter does (as bytes, it would leave them little-endian).
    w.add_tensor("bf16", bf.astype(np.uint16).reshape(2, 4), raw_dtype=Q.BF16)
    w.add_tensor("single", np.array([42.0], dtype=np.float32))


def random_blocks(qtype, n_blocks, rng=RNG):
    block, size = gguf.GGML_QUANT_SIZES[qtype]
    blocks = rng.integers(0, 256, size=(n_blocks, size), dtype=np.uint8)
    out = gguf.quants.dequantize(blocks.reshape(1, -1), qtype).reshape(n_blocks, block)
    bad = ~np.isfinite(out).all(axis=1)
    # Keep scales finite: clear bit 6 of every odd byte (the high byte of a little-endian
    # float16 at an even offset) in the blocks that decoded to Inf or NaN.
    blocks[bad, 1::2] &= 0xBF
    out = gguf.quants.dequantize(blocks.reshape(1, -1), qtype)
    assert np.isfinite(out).all(), qtype.name
    return blocks


def quantized_file(w):
    for qtype in DEQUANTIZED:
        block, size = gguf.GGML_QUANT_SIZES[qtype]
        rows, cols = 3, 2 * max(block, 256 if block > 32 else 64)
        if qtype in QUANTIZED_BY_GGUF_PY:
            x = (RNG.standard_normal((rows, cols)) * 0.7).astype(np.float32)
            x[0, :block] = 0.0  # an all-zero block
            data = gguf.quants.quantize(x, qtype)
        else:
            data = random_blocks(qtype, rows * cols // block).reshape(rows, cols // block * size)
        w.add_tensor(f"q.{qtype.name}", data, raw_dtype=qtype)


def model_file(w):
    # Its own generator: the model and its split set hold the same values.
    rng = np.random.default_rng(5)
    w.add_name("tiny test model")
    w.add_context_length(128)
    w.add_embedding_length(256)
    w.add_block_count(2)
    w.add_head_count(4)
    w.add_file_type(15)
    w.add_quantization_version(2)
    tokens = [f"tok{i}" for i in range(300)] + ["<s>", "</s>", "▁the"]
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores([float(-i) / 3 for i in range(len(tokens))])
    w.add_token_types([1] * (len(tokens) - 3) + [3, 3, 1])
    w.add_bos_token_id(300)
    embd = (rng.standard_normal((16, 256)) * 0.1).astype(np.float32)
    w.add_tensor("token_embd.weight", random_blocks(Q.Q4_K, 16, rng).reshape(16, 144), raw_dtype=Q.Q4_K)
    for b in range(2):
        w.add_tensor(f"blk.{b}.attn_norm.weight", np.ones(256, dtype=np.float32))
        w.add_tensor(f"blk.{b}.attn_q.weight", gguf.quants.quantize(embd, Q.Q8_0), raw_dtype=Q.Q8_0)
        w.add_tensor(f"blk.{b}.ffn_down.weight", random_blocks(Q.Q6_K, 4, rng).reshape(4, 210), raw_dtype=Q.Q6_K)
    w.add_tensor("output_norm.weight", np.linspace(0.5, 1.5, 256, dtype=np.float32))


def malformed(out):
    """Damaged copies, each with what a reader must say of it."""
    dense = (out / "dense.gguf").read_bytes()
    meta = (out / "metadata.gguf").read_bytes()
    mdir = out / "malformed"
    if mdir.exists():
        shutil.rmtree(mdir)
    mdir.mkdir()
    r = gguf.GGUFReader(out / "dense.gguf")
    first = r.tensors[0].field.offset  # the first tensor info
    name_len = struct.unpack_from("<Q", dense, first)[0]
    n_dims_at = first + 8 + name_len
    dims_at = n_dims_at + 4
    n_dims = struct.unpack_from("<I", dense, n_dims_at)[0]
    type_at = dims_at + 8 * n_dims
    offset_at = type_at + 4
    second = r.tensors[1].field.offset
    second_offset_at = second + 8 + struct.unpack_from("<Q", dense, second)[0] + 4
    second_offset_at += 8 * struct.unpack_from("<I", dense, second_offset_at - 4)[0] + 4
    first_kv = 24
    m = gguf.GGUFReader(out / "metadata.gguf")
    u8_key = m.fields["t.u8"].offset
    str_field = m.fields["t.str"]
    str_len_at = str_field.offset + 8 + len("t.str") + 4
    arr_field = m.fields["arr.uint32"]
    arr_count_at = arr_field.offset + 8 + len("arr.uint32") + 4 + 4

    def patch(b, at, fmt, value):
        b = bytearray(b)
        struct.pack_into(fmt, b, at, value)
        return bytes(b)

    cases = {
        "bad_magic": (b"GGUG" + dense[4:], "unknown format"),
        "version_1": (patch(dense, 4, "<I", 1), "Unsupported"),
        "version_4": (patch(dense, 4, "<I", 4), "Unsupported"),
        "truncated_header": (dense[:20], "Truncated"),
        "truncated_metadata": (meta[: str_len_at + 12], "Truncated"),
        "truncated_data": (dense[: len(dense) - 40], "Truncated"),
        "huge_tensor_count": (patch(dense, 8, "<Q", 2**62), "LimitExceeded"),
        "huge_kv_count": (patch(dense, 16, "<Q", 2**62), "LimitExceeded"),
        "huge_string_length": (patch(meta, str_len_at, "<Q", 2**62), "Truncated"),
        "huge_array_count": (patch(meta, arr_count_at, "<Q", 2**61), "Truncated"),
        "huge_key_length": (patch(meta, first_kv, "<Q", 2**63), "Truncated"),
        "unknown_value_type": (patch(meta, u8_key + 8 + len("t.u8"), "<I", 13), "Malformed"),
        "unknown_array_item_type": (patch(meta, arr_count_at - 4, "<I", 99), "Malformed"),
        "non_utf8_key": (patch(meta, first_kv + 8, "<B", 0xFF), "Malformed"),
        "five_dimensions": (patch(dense, n_dims_at, "<I", 5), "Malformed"),
        "element_count_overflow": (patch(patch(dense, dims_at, "<Q", 2**40), dims_at + 8, "<Q", 2**40), "Malformed"),
        "unknown_ggml_type": (patch(dense, type_at, "<I", 77), "Unsupported"),
        "removed_ggml_type": (patch(dense, type_at, "<I", 4), "Unsupported"),
        "offset_past_end": (patch(dense, offset_at, "<Q", 2**40), "Truncated"),
        "offset_misaligned": (patch(dense, offset_at, "<Q", 4), "Malformed"),
        "overlapping_tensors": (patch(dense, second_offset_at, "<Q", 0), "Malformed"),
        "duplicate_tensor_name": (None, "Malformed"),
        "duplicate_key": (None, "Malformed"),
        "alignment_not_power_of_two": (None, "Malformed"),
        "alignment_wrong_type": (None, "Malformed"),
        "quantized_row_not_whole_blocks": (None, "Malformed"),
    }

    def built(name, build, **kw):
        p = mdir / f"{name}.tmp"
        try:
            write(p, build, **kw)
        except Exception:
            pass
        return p.read_bytes()

    def dup_tensor(w):
        w.add_tensor("a", np.zeros(4, dtype=np.float32))
        w.add_tensor("b", np.ones(4, dtype=np.float32))

    raw = built("dup", dup_tensor)
    i = raw.index(b"\x01\x00\x00\x00\x00\x00\x00\x00b")
    cases["duplicate_tensor_name"] = (raw[: i + 8] + b"a" + raw[i + 9 :], "Malformed")

    def dup_key(w):
        w.add_uint32("k.one", 1)
        w.add_uint32("k.two", 2)
        w.add_tensor("a", np.zeros(4, dtype=np.float32))

    raw = built("dupkey", dup_key)
    cases["duplicate_key"] = (raw.replace(b"k.two", b"k.one"), "Malformed")

    def align(w):
        w.add_custom_alignment(64)
        w.add_tensor("a", np.zeros(4, dtype=np.float32))

    raw = built("align", align)
    i = raw.index(b"general.alignment") + len("general.alignment") + 4
    cases["alignment_not_power_of_two"] = (patch(raw, i, "<I", 48), "Malformed")
    cases["alignment_wrong_type"] = (patch(raw, i - 4, "<I", int(V.UINT64)) + b"", "Malformed")

    def q(w):
        w.add_tensor("q", gguf.quants.quantize(np.zeros((2, 64), dtype=np.float32), Q.Q8_0), raw_dtype=Q.Q8_0)

    raw = built("q", q)
    i = raw.index(b"\x01\x00\x00\x00\x00\x00\x00\x00q") + 9
    cases["quantized_row_not_whole_blocks"] = (patch(patch(raw, i + 4, "<Q", 48), i + 12, "<Q", 4), "Malformed")
    for p in mdir.glob("*.tmp"):
        p.unlink()

    for name, (data, kind) in cases.items():
        path = mdir / f"{name}.gguf"
        path.write_bytes(data)
        try:
            gguf.GGUFReader(path)
            reference = "read without error"
        except Exception as e:  # what the reference makes of it, for the record
            reference = f"{type(e).__name__}: {str(e)[:120]}"
        (mdir / f"{name}.json").write_text(
            json.dumps({"kind": kind, "gguf_py": reference}, indent=1) + "\n"
        )


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.gguf"):
        old.unlink()
    for old in out.glob("*.json"):
        old.unlink()
    write(out / "metadata.gguf", metadata_file)
    write(out / "dense.gguf", dense_file)
    write(out / "quantized.gguf", quantized_file)

    def aligned(n):
        def build(w):
            w.add_custom_alignment(n)
            dense_file(w)
        return build

    write(out / "aligned_64.gguf", aligned(64))
    write(out / "aligned_1.gguf", aligned(1))
    write(out / "big_endian.gguf", dense_file, endianess=gguf.GGUFEndian.BIG)
    v2 = bytearray((out / "dense.gguf").read_bytes())
    struct.pack_into("<I", v2, 4, 2)
    (out / "v2.gguf").write_bytes(bytes(v2))
    write(out / "model.gguf", model_file)
    write(out / "split.gguf", model_file, split_max_tensors=3)
    for p in sorted(out.glob("*.gguf")):
        finish(p)
    malformed(out)


if __name__ == "__main__":
    main()
