"""tensorkit.edit against the reference packages: every edited file opens in its format's
own package with the edited metadata and names and the same tensors; safetensors and GGUF
headers that fit are rewritten in place; an edit a format cannot hold leaves the file as
it was."""

import bintensors.numpy as bt
import numpy as np
import pytest
import safetensors
import safetensors.numpy as st
import tensogram
import ztensor.numpy as zt

import tensorkit

TENSORS = {
    "a": np.arange(12, dtype=np.float32).reshape(3, 4),
    "b": np.arange(6, dtype=np.int16),
}


def same_tensors(got, renames=None):
    renames = renames or {}
    want = {renames.get(k, k): v for k, v in TENSORS.items()}
    assert sorted(got) == sorted(want)
    for name, arr in want.items():
        np.testing.assert_array_equal(np.asarray(got[name]), arr, err_msg=name)


def test_safetensors_in_place_then_copy(tmp_path):
    path = tmp_path / "m.safetensors"
    st.save_file(TENSORS, path, metadata={"format": "np", "note": "x" * 100})
    data = path.read_bytes()
    report = tensorkit.edit(path, {"note": "short"}, rename={"a": "alpha"})
    assert report.in_place and report.format == "safetensors" and not report.dry_run
    assert [c.op for c in report.changes] == ["set", "rename"]
    assert report.changes[0] == tensorkit.Change(op="set", key="note", old="x" * 100, new="short")
    assert report.changes[1] == tensorkit.Change(op="rename", old="a", new="alpha")
    edited = path.read_bytes()
    header = 8 + int.from_bytes(data[:8], "little")
    assert len(edited) == len(data) and edited[header:] == data[header:]
    with safetensors.safe_open(path, "np") as f:
        assert f.metadata() == {"format": "np", "note": "short"}
    same_tensors(st.load_file(path), {"a": "alpha"})

    report = tensorkit.edit(path, {"licence": "y" * 1000}, delete=["note"])
    assert report.method == "copy"
    with safetensors.safe_open(path, "np") as f:
        assert f.metadata() == {"format": "np", "licence": "y" * 1000}
    same_tensors(st.load_file(path), {"a": "alpha"})


def test_a_dry_run_and_a_refused_edit_change_nothing(tmp_path):
    path = tmp_path / "m.safetensors"
    st.save_file(TENSORS, path)
    before = path.read_bytes()
    report = tensorkit.edit(path, {"k": "v"}, dry_run=True)
    assert report.dry_run and report.method == "copy" and len(report.changes) == 1
    with pytest.raises(tensorkit.UnsupportedError, match="only strings"):
        tensorkit.edit(path, {"k": 5})
    with pytest.raises(tensorkit.UnsupportedError, match="no place"):
        tensorkit.edit(path, attributes={"a": {"units": "K"}})
    with pytest.raises(tensorkit.InvalidArgumentError, match="no metadata key"):
        tensorkit.edit(path, delete=["missing"])
    with pytest.raises(tensorkit.InvalidArgumentError, match="already has that name"):
        tensorkit.edit(path, rename={"a": "b"})
    assert path.read_bytes() == before
    assert tensorkit.edit(path).method == "unchanged"


def test_gguf_as_gguf_py_reads_it(tmp_path):
    gguf = pytest.importorskip("gguf")
    path = tmp_path / "m.gguf"
    w = gguf.GGUFWriter(path, "llama")
    w.add_name("model")
    w.add_context_length(2048)
    for name, arr in TENSORS.items():
        w.add_tensor(name, arr)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    report = tensorkit.edit(path, {"general.name": "modl"})
    assert report.in_place
    report = tensorkit.edit(
        path,
        {"llama.context_length": 4096, "general.licence": "mit", "tokenizer.chat_template": "{{ x }}" * 50},
        rename={"b": "bias"},
        types={"general.licence": "STRING"},
    )
    r = gguf.GGUFReader(path)
    fields = {k: f.contents() for k, f in r.fields.items()}
    assert fields["general.name"] == "modl"
    assert fields["llama.context_length"] == 4096
    assert r.fields["llama.context_length"].types == [gguf.GGUFValueType.UINT32]
    assert fields["general.licence"] == "mit"
    assert fields["tokenizer.chat_template"] == "{{ x }}" * 50
    same_tensors({t.name: np.asarray(t.data).reshape(tuple(reversed(t.shape.tolist()))) for t in r.tensors}, {"b": "bias"})


def test_bintensors_in_place_as_bintensors_reads_it(tmp_path):
    path = tmp_path / "m.bt"
    bt.save_file(TENSORS, path, metadata={"note": "x" * 100})
    data = path.read_bytes()
    report = tensorkit.edit(path, {"note": "short"}, rename={"b": "bias"})
    assert report.in_place, report
    edited = path.read_bytes()
    header = 8 + int.from_bytes(data[:8], "little")
    assert edited[:8] == data[:8] and edited[header:] == data[header:]
    same_tensors(bt.load_file(path), {"b": "bias"})
    with tensorkit.open(path) as f:
        assert f.metadata == {"note": "short"}
    assert tensorkit.edit(path, {"note": "y" * 200}).method == "copy"
    same_tensors(bt.load_file(path), {"b": "bias"})


def test_ztensor_bintensors_and_tensogram_read_the_edited_files(tmp_path):
    for ext in ("zt", "bt", "tgm"):
        path = tmp_path / f"m.{ext}"
        tensorkit.save(path, TENSORS, metadata={"source": "test"})
        attributes = {"a": {"units": "K", "scale": 0.5}} if ext != "bt" else {}
        report = tensorkit.edit(path, {"source": "edited", "licence": "mit"}, rename={"b": "bias"}, attributes=attributes)
        # zTensor 2's manifest, at the end of the file, is rewritten in place; the others
        # grow their headers here.
        assert report.method == ("in-place" if ext == "zt" else "copy"), ext
        with tensorkit.open(path) as f:
            assert f.metadata == {"source": "edited", "licence": "mit"}, ext
    same_tensors(zt.load_file(tmp_path / "m.zt"), {"b": "bias"})
    same_tensors(bt.load_file(tmp_path / "m.bt"), {"b": "bias"})
    meta, objects = tensogram.decode((tmp_path / "m.tgm").read_bytes(), verify_hash=True)
    assert meta.extra == {"source": "edited", "licence": "mit"}
    assert meta.base[0]["units"] == "K" and meta.base[0]["scale"] == 0.5
    same_tensors({base["name"]: arr for base, (_, arr) in zip(meta.base, objects)}, {"b": "bias"})


def test_a_tensogram_edit_keeps_each_object_encoded_as_it_was(tmp_path):
    path = tmp_path / "c.tgm"
    tensorkit.save(path, TENSORS, pipeline="shuffle,zstd:3")
    before = [desc.compression for desc, _ in tensogram.decode(path.read_bytes())[1]]
    tensorkit.edit(path, {"k": "v"})
    meta, objects = tensogram.decode(path.read_bytes(), verify_hash=True)
    assert [desc.compression for desc, _ in objects] == before == ["zstd", "zstd"]
    same_tensors({base["name"]: arr for base, (_, arr) in zip(meta.base, objects)})


def test_a_header_reserve_takes_later_edits_in_place(tmp_path):
    gguf = pytest.importorskip("gguf")
    for ext in ("safetensors", "gguf"):
        path = tmp_path / f"r.{ext}"
        tensorkit.save(path, TENSORS, metadata={"note": "x"}, header_reserve="4KiB")
        size = path.stat().st_size
        report = tensorkit.edit(path, {"tokenizer.chat_template": "t" * 3000})
        assert report.in_place, ext
        assert path.stat().st_size == size
        with tensorkit.open(path) as f:
            assert f.metadata["tokenizer.chat_template"] == "t" * 3000
            assert "tensorkit.padding" not in f.metadata
    with safetensors.safe_open(tmp_path / "r.safetensors", "np") as f:
        assert f.metadata()["tokenizer.chat_template"] == "t" * 3000
    r = gguf.GGUFReader(tmp_path / "r.gguf")
    assert r.fields["tokenizer.chat_template"].contents() == "t" * 3000
    same_tensors({t.name: np.asarray(t.data).reshape(tuple(reversed(t.shape.tolist()))) for t in r.tensors})


def test_safetensors_written_by_tensorkit_keep_room_by_default_and_the_drop_in_does_not(tmp_path):
    path = tmp_path / "d.safetensors"
    tensorkit.save(path, TENSORS, metadata={"note": "x"})
    exact = st.save(TENSORS, metadata={"note": "x"})
    assert path.stat().st_size == len(exact) + 4096
    assert tensorkit.serialize(TENSORS, "safetensors", metadata={"note": "x"}, header_reserve=0) == exact
    from tensorkit.safetensors import numpy as drop_in

    assert drop_in.save(TENSORS, metadata={"note": "x"}) == exact
    report = tensorkit.edit(path, {"licence": "CC-BY-4.0", "tokenizer.chat_template": "t" * 2000})
    assert report.in_place
    with safetensors.safe_open(path, "np") as f:
        assert f.metadata() == {"note": "x", "licence": "CC-BY-4.0", "tokenizer.chat_template": "t" * 2000}
    same_tensors(st.load_file(path))
    # GGUF's room would be a key gguf-py lists: none unless asked for.
    gguf = tmp_path / "d.gguf"
    tensorkit.save(gguf, TENSORS)
    with tensorkit.open(gguf) as f:
        assert f.metadata.get("tensorkit.padding") is None


def test_a_tensogram_metadata_frame_that_keeps_its_size_is_rewritten_in_place(tmp_path):
    # Two messages written by tensogram itself, each with its own metadata frame.
    path = tmp_path / "ref.tgm"
    with open(path, "wb") as f:
        for i, (name, arr) in enumerate(TENSORS.items()):
            desc = {"type": "ntensor", "shape": list(arr.shape), "dtype": str(arr.dtype)}
            f.write(tensogram.encode({"base": [{"name": name}], "note": f"run{i}"}, [(desc, arr)]))
    before = path.read_bytes()
    report = tensorkit.edit(path, {"note": "RUN9"})
    assert report.in_place, report
    after = path.read_bytes()
    assert len(after) == len(before)
    # Only the metadata frames changed: every data frame's bytes are where they were.
    for arr in TENSORS.values():
        raw = arr.tobytes()
        assert after.index(raw) == before.index(raw)
    offset, got = 0, {}
    for _ in TENSORS:
        length = int.from_bytes(after[offset + 16:offset + 24], "big")
        msg = after[offset:offset + length]
        assert tensogram.validate(msg)["issues"] == []
        meta, objects = tensogram.decode(msg, verify_hash=True)
        assert meta.extra["note"] == "RUN9"
        got[meta.base[0]["name"]] = objects[0][1]
        offset += length
    same_tensors(got)
    # A value that no longer fits the frame's padding re-frames the file.
    assert tensorkit.edit(path, {"note": "x" * 100}, attributes={"a": {"unit": "K"}}).method == "copy"
    with tensorkit.open(path) as f:
        assert f.metadata["note"] == "x" * 100
        assert f.info("a")["attributes"]["unit"] == "K"
