"""tensorkit.safetensors against safetensors.numpy: same names, same behaviour, same bytes."""

import inspect
import json

import ml_dtypes
import numpy as np
import pytest
import safetensors.numpy as reference
from safetensors import safe_open as reference_open

import tensorkit
from tensorkit import safetensors as st

TENSORS = {
    "embed.weight": np.arange(24, dtype=np.float32).reshape(4, 6),
    "bias": np.array([1, -2, 3], dtype=np.int64),
    "mask": np.array([True, False]),
    "half": np.array([0.5, -1.5], dtype=np.float16),
    "bf16": np.array([1.0, -2.0, 3.5], dtype=ml_dtypes.bfloat16),
    "scalar": np.array(7, dtype=np.uint8),
}
METADATA = {"format": "np", "note": "unit test"}


def test_the_functions_have_the_references_signatures():
    for name in ("save", "save_file", "load", "load_file"):
        assert inspect.signature(getattr(st, name)).parameters.keys() == inspect.signature(
            getattr(reference, name)
        ).parameters.keys(), name


def header(data):
    n = int.from_bytes(data[:8], "little")
    return json.loads(data[8 : 8 + n]), data[8 + n :]


def test_save_writes_the_bytes_safetensors_writes(tmp_path):
    # safetensors orders metadata keys by a per-process hash: byte equality holds for one key.
    one = {"format": "np"}
    assert st.save(TENSORS, metadata=one) == reference.save(TENSORS, metadata=one)
    assert st.save(TENSORS) == reference.save(TENSORS)
    assert header(st.save(TENSORS, metadata=METADATA)) == header(reference.save(TENSORS, metadata=METADATA))
    st.save_file(TENSORS, tmp_path / "a.safetensors", metadata=one)
    reference.save_file(TENSORS, tmp_path / "b.safetensors", metadata=one)
    assert (tmp_path / "a.safetensors").read_bytes() == (tmp_path / "b.safetensors").read_bytes()


def test_load_reads_what_safetensors_writes(tmp_path):
    reference.save_file(TENSORS, tmp_path / "r.safetensors")
    for loaded in (st.load_file(tmp_path / "r.safetensors"), st.load(reference.save(TENSORS))):
        assert loaded.keys() == TENSORS.keys()
        for name, want in TENSORS.items():
            got = loaded[name]
            assert got.dtype == want.dtype and got.shape == want.shape
            assert got.tobytes() == want.tobytes()
            assert got.flags.writeable  # as safetensors gives them


def test_safe_open_behaves_like_the_reference(tmp_path):
    path = tmp_path / "m.safetensors"
    reference.save_file(TENSORS, path, metadata=METADATA)
    with st.safe_open(path, framework="numpy") as ours, reference_open(path, framework="numpy") as theirs:
        assert ours.keys() == theirs.keys()
        assert ours.offset_keys() == theirs.offset_keys()
        assert ours.metadata() == theirs.metadata()
        for name in theirs.keys():
            assert ours.get_tensor(name).tobytes() == theirs.get_tensor(name).tobytes()
            mine, ref = ours.get_slice(name), theirs.get_slice(name)
            assert mine.get_shape() == ref.get_shape()
            assert mine.get_dtype() == ref.get_dtype()
        assert (ours.get_slice("embed.weight")[1:3, ::2] == theirs.get_slice("embed.weight")[1:3, ::2]).all()
        with pytest.raises(KeyError):
            ours.get_tensor("missing")
        with pytest.raises(st.SafetensorError, match="does not contain tensor missing"):
            ours.get_slice("missing")


def test_other_formats_and_frameworks_are_refused_clearly(tmp_path):
    tensorkit.save(tmp_path / "x.zt", {"x": np.zeros(2)})
    with pytest.raises(tensorkit.UnsupportedError, match="not safetensors"):
        st.load_file(tmp_path / "x.zt")
    reference.save_file(TENSORS, tmp_path / "m.safetensors")
    with pytest.raises(st.SafetensorError, match="not safetensors"):
        st.load_file(tmp_path / "x.zt")
    with pytest.raises(tensorkit.UnsupportedError, match="framework 'tf'"):
        st.safe_open(tmp_path / "m.safetensors", framework="tf")
    with pytest.raises(tensorkit.InvalidArgumentError):
        st.save(TENSORS, metadata={"n": 1})
    with pytest.raises(tensorkit.TensorkitError):
        st.load(b"\x08\x00\x00\x00\x00\x00\x00\x00{}")
    with pytest.raises(st.SafetensorError):
        st.load(b"\x08\x00\x00\x00\x00\x00\x00\x00{}")


def test_every_dtype_name_comes_from_the_rust_table(tmp_path):
    # The float8 FNUZ types have no numpy form here; their names must still be reported.
    for dtype, size in (("F8_E4M3FNUZ", 2), ("F8_E5M2FNUZ", 2), ("F8_E4M3", 2), ("C64", 16), ("F4", 1)):
        head = json.dumps({"x": {"dtype": dtype, "shape": [2], "data_offsets": [0, size]}}).encode()
        head += b" " * (-len(head) % 8)
        path = tmp_path / f"{dtype}.safetensors"
        path.write_bytes(len(head).to_bytes(8, "little") + head + bytes(size))
        with st.safe_open(path, framework="numpy") as ours, reference_open(path, framework="numpy") as theirs:
            assert ours.get_slice("x").get_dtype() == theirs.get_slice("x").get_dtype() == dtype
