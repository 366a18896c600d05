"""tensorkit.torch: every format into torch and back, the CPU and staged load paths, and
File.to_torch / File.to_jax."""

from __future__ import annotations

import json

import numpy as np
import pytest
import safetensors.torch
import torch

import tensorkit
import tensorkit.torch as tt
from test_safetensors_torch import every_dtype, same


def _mixed(seed: int = 5) -> dict[str, torch.Tensor]:
    """Tensors of odd byte lengths (so that offsets in the file are misaligned), zero-size
    ones, and one larger than many staging buffers."""
    g = torch.Generator().manual_seed(seed)
    return {
        "a": torch.randn(3, 5, generator=g),
        "odd": torch.randint(0, 255, (13,), dtype=torch.uint8, generator=g),
        "zero": torch.empty(0, 7),
        "h": torch.randn(4, 3, generator=g).to(torch.float16),
        "big": torch.randn(257, generator=g, dtype=torch.float64),
        "zero2": torch.empty(2, 0, dtype=torch.int32),
        "s": torch.tensor(7, dtype=torch.int64),
    }


@pytest.mark.parametrize("ext", ["safetensors", "zt", "bt", "tgm"])
def test_every_format_round_trips_through_torch(tmp_path, ext):
    tensors = _mixed()
    path = tmp_path / f"m.{ext}"
    tt.save_file(tensors, path, metadata={"k": "v"})
    for kwargs in [{}, {"backend": "pread"}, {"staging_bytes": 5, "threads": 3}]:
        got = tt.load_file(path, **kwargs)
        assert sorted(got) == sorted(tensors)
        for k, v in tensors.items():
            assert same(got[k], v), (ext, kwargs, k)


def test_staged_pipeline_spans_tensors_and_misaligned_offsets(tmp_path):
    tensors = every_dtype(9) | _mixed()
    path = tmp_path / "m.safetensors"
    safetensors.torch.save_file(tensors, path)
    ref = safetensors.torch.load_file(path)
    for staging in (1, 3, 7, 64, 1000, 1 << 20):
        got = tt.load_file(path, "cpu", staging_bytes=staging)
        for k in ref:
            assert same(got[k], ref[k]), (staging, k)


def test_chunk_plan_covers_every_byte_once_within_the_staging_size(tmp_path):
    path = tmp_path / "m.safetensors"
    safetensors.torch.save_file(_mixed(), path)
    with tensorkit.open(path) as f:
        entries = [tt._Entry.of(row) for row in f._native.layout(None)]
    for staging in (1, 4, 9, 100):
        chunks = tt.plan_chunks(entries, staging)
        covered: dict[str, list[tuple[int, int]]] = {}
        for c in chunks:
            assert 0 < c.end - c.start <= staging
            for e, at, start, n in c.pieces:
                assert c.start + start == e.offset + at and start + n <= c.end - c.start
                covered.setdefault(e.name, []).append((at, n))
        for e in entries:
            if e.nbytes:
                spans = sorted(covered[e.name])
                assert spans[0][0] == 0 and sum(n for _, n in spans) == e.nbytes
                assert all(a + n == b for (a, n), (b, _) in zip(spans, spans[1:]))
    with pytest.raises(tensorkit.InvalidArgumentError):
        tt.plan_chunks(entries, 0)


def test_shard_sets_load_into_torch(tmp_path):
    tensors = _mixed()
    tt.save_file(tensors, tmp_path / "model.safetensors", max_shard_size=600)
    index = tmp_path / "model.safetensors.index.json"
    assert len(set(json.loads(index.read_text())["weight_map"].values())) > 1
    for kwargs in [{}, {"staging_bytes": 11}]:
        got = tt.load_file(index, **kwargs)
        for k, v in tensors.items():
            assert same(got[k], v), k


def test_encoded_and_grib_tensors_decode_into_torch(tmp_path, testdata):
    tensors = {"w": torch.randn(64, 3)}
    tt.save_file(tensors, tmp_path / "z.tgm", pipeline="zstd")
    got = tt.load_file(tmp_path / "z.tgm", staging_bytes=16)
    assert same(got["w"], tensors["w"])
    grib = testdata / "grib" / "reference" / "ieee.grib2"
    with tensorkit.open(grib) as f:
        want = {k: f[k] for k in f}
    got = tt.load_file(grib)
    for k, v in want.items():
        assert np.array_equal(got[k].numpy(), v)


def test_gguf_loads_into_torch_dequantized_and_saves_quantized(tmp_path, testdata):
    model = testdata / "gguf" / "reference" / "model.gguf"
    with tensorkit.open(model) as f:
        want = {k: f[k] for k in f}
    got = tt.load_file(model)
    assert set(got) == set(want)
    for k, v in want.items():
        assert got[k].dtype == torch.float32
        assert np.array_equal(got[k].numpy(), v), k
    # A staged load (the path devices take) decodes the same values.
    staged = tt.load_file(model, staging_bytes=4096)
    assert all(torch.equal(staged[k], got[k]) for k in got)
    tt.save_file({"w": torch.randn(4, 64), "b": torch.randn(64)}, tmp_path / "q.gguf", quantize="Q8_0")
    with tensorkit.open(tmp_path / "q.gguf") as f:
        assert f.info("w")["encoding"] == "Q8_0" and f.info("b")["encoding"] == "none"


def test_file_to_torch_and_to_jax(tmp_path):
    import jax.numpy as jnp

    path = tmp_path / "m.zt"
    tensors = _mixed()
    tt.save_file(tensors, path)
    with tensorkit.open(path) as f:
        for k, v in tensors.items():
            assert same(f.to_torch(k), v)
            assert bool(jnp.array_equal(f.to_jax(k), jnp.asarray(v.numpy())))


def test_what_torch_cannot_take_is_refused(tmp_path):
    path = tmp_path / "f6.safetensors"
    tensorkit.save(path, {"x": np.zeros(4, dtype="float32")})
    with pytest.raises(tensorkit.UnsupportedError):
        tt.torch_dtype("float6_e2m3")
    with pytest.raises(tensorkit.InvalidArgumentError):
        tt.load_file(path, backend="io_uring")
    with pytest.raises(tensorkit.InvalidArgumentError):
        tt.device_of("no-such-device")


def test_tensors_outlive_the_file_and_its_mapping(tmp_path):
    import gc

    path = tmp_path / "m.safetensors"
    safetensors.torch.save_file({"w": torch.arange(1000, dtype=torch.float32)}, path)
    w = tt.load_file(path)["w"]
    gc.collect()
    path.unlink()
    assert w.sum().item() == sum(range(1000))


def test_read_into_fills_matching_tensors_in_place_and_leaves_the_rest(tmp_path):
    tensors = _mixed() | {"p": torch.randn(6), "q": torch.randn(6)}
    path = tmp_path / "m.safetensors"
    tt.save_file(tensors, path)
    tied = torch.zeros(6)
    targets = {
        "a": torch.zeros(3, 5),  # filled
        "h": torch.zeros(4, 3),  # a dtype other than the file's: left alone
        "big": torch.zeros(257, dtype=torch.float64),
        "zero": torch.empty(0, 7),
        "p": tied,  # "p" and "q" share memory: only the first is read into it
        "q": tied,
        "nope": torch.zeros(1),  # not in the file
    }
    with tensorkit.open(path) as f:
        filled = tt.read_into(f, targets, threads=3)
        buf = torch.zeros(8, dtype=torch.uint8)
        with pytest.raises(tensorkit.InvalidArgumentError, match="overlap"):
            f._native.read_stored_many([(0, 8, buf[:6].numpy()), (0, 8, buf[4:].numpy())])
    assert sorted(filled) == ["a", "big", "p"]  # (a zero-size tensor has nothing to read)
    for k in filled:
        assert same(targets[k], tensors[k]), k
    assert torch.count_nonzero(targets["h"]) == 0


def test_load_model_reads_into_the_module_and_answers_as_before(tmp_path):
    import safetensors.torch as st

    import tensorkit.safetensors.torch as kt

    model = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2))
    path = tmp_path / "m.safetensors"
    st.save_model(model, path)
    ours = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2))
    weight_before = ours[0].weight
    assert kt.load_model(ours, path) == (set(), [])
    assert ours[0].weight is weight_before  # filled in place, not replaced
    for k, v in model.state_dict().items():
        assert same(ours.state_dict()[k], v), k
    # A dtype the module does not hold goes through load_state_dict's conversion.
    half = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2)).half()
    kt.load_model(half, path)
    assert torch.equal(half[0].weight, model[0].weight.half())


def test_packed_bits_are_decoded_not_read_raw():
    # A bitmask lies in its file as bits; torch holds one bool per byte.
    assert not tt._Entry("m", "bitmask", [10], 2, 0, 64).raw
    assert tt._Entry("f", "float4_e2m1", [4], 2, 0, 64).raw  # torch holds float4 packed
    assert not tt._Entry("z", "float32", [0], 0, 0, 64).raw
