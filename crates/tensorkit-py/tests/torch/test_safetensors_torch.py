"""tensorkit.safetensors against safetensors 0.8 itself: the same files, loads, errors,
slices and model handling, for every dtype safetensors and torch share."""

from __future__ import annotations

import gc
import os
import pickle
import warnings

import pytest
import safetensors
import safetensors.flax
import safetensors.numpy
import safetensors.torch
import torch

import tensorkit
import tensorkit.safetensors as ks
import tensorkit.safetensors.flax
import tensorkit.safetensors.numpy
import tensorkit.safetensors.torch as kt


def _bits(t: torch.Tensor) -> torch.Tensor:
    """The tensor's bytes with its shape, comparable whatever the dtype (NaNs included)."""
    return t.contiguous().reshape(-1).view(torch.uint8).clone()


def same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(_bits(a), _bits(b))


def _random_bytes(n: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, 256, (n,), dtype=torch.uint8, generator=g)


def every_dtype(seed: int = 0) -> dict[str, torch.Tensor]:
    """One tensor of every dtype safetensors and torch share, random bits, odd shapes."""
    out = {}
    for i, dt in enumerate(
        [
            torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
            torch.uint16, torch.uint32, torch.uint64, torch.float16, torch.bfloat16,
            torch.float32, torch.float64, torch.complex64, torch.float8_e4m3fn,
            torch.float8_e5m2, torch.float8_e4m3fnuz, torch.float8_e5m2fnuz,
            torch.float8_e8m0fnu, torch.float4_e2m1fn_x2,
        ]
    ):
        shape = (3, 2 + i % 3)
        n = shape[0] * shape[1] * dt.itemsize
        raw = _random_bytes(n, seed + i)
        if dt == torch.bool:
            raw = raw % 2
        out[str(dt).removeprefix("torch.")] = raw.view(dt).reshape(shape)
    out["empty"] = torch.empty(0, 4)
    out["scalar"] = torch.tensor(2.5, dtype=torch.float64)
    return out


def test_files_are_byte_identical_to_safetensors(tmp_path):
    tensors = every_dtype()
    # One key: safetensors writes several in its hash map's order, which changes from run
    # to run.
    meta = {"note": "ü"}
    safetensors.torch.save_file(tensors, tmp_path / "ref.safetensors", metadata=meta)
    kt.save_file(tensors, tmp_path / "ours.safetensors", metadata=meta)
    assert (tmp_path / "ours.safetensors").read_bytes() == (tmp_path / "ref.safetensors").read_bytes()
    assert kt.save(tensors, metadata=meta) == safetensors.torch.save(tensors, metadata=meta)
    assert kt.save({}) == safetensors.torch.save({})


@pytest.mark.parametrize("how", ["load_file", "pread", "load", "safe_open", "get_tensor"])
def test_loads_equal_safetensors_for_every_dtype(tmp_path, how):
    path = tmp_path / "m.safetensors"
    tensors = every_dtype(7)
    safetensors.torch.save_file(tensors, path)
    ref = safetensors.torch.load_file(path)
    if how == "load_file":
        got = kt.load_file(path)
    elif how == "pread":
        got = kt.load_file(path, backend="pread")
    elif how == "load":
        got = kt.load(path.read_bytes())
    elif how == "safe_open":
        with ks.safe_open(path, framework="pt") as f:
            got = f.get_tensors()
    else:
        with ks.safe_open(path, framework="pt", device="cpu") as f:
            got = {k: f.get_tensor(k) for k in f.keys()}
    assert sorted(got) == sorted(ref)
    for k in ref:
        assert same(got[k], ref[k]), k


def test_cpu_tensors_are_writable_views_that_never_touch_the_file(tmp_path):
    path = tmp_path / "m.safetensors"
    safetensors.torch.save_file({"w": torch.arange(16, dtype=torch.float32)}, path)
    before = path.read_bytes()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # torch warns about read-only buffers
        w = kt.load_file(path)["w"]
    w += 1  # in place, on the private mapping's copy of the page
    gc.collect()
    assert w[3].item() == 4.0
    assert path.read_bytes() == before
    assert same(safetensors.torch.load_file(path)["w"], torch.arange(16, dtype=torch.float32))


def test_safe_open_answers_as_safetensors_does(tmp_path):
    path = tmp_path / "m.safetensors"
    safetensors.torch.save_file(every_dtype(3), path, metadata={"a": "b"})
    with safetensors.safe_open(path, "pt") as ref, ks.safe_open(path, "pt") as ours:
        assert ours.keys() == ref.keys()
        assert ours.offset_keys() == ref.offset_keys()
        assert ours.metadata() == ref.metadata()
        for name in ref.keys():
            assert ours.get_slice(name).get_shape() == ref.get_slice(name).get_shape()
            assert ours.get_slice(name).get_dtype() == ref.get_slice(name).get_dtype()
        with pytest.raises(ks.SafetensorError):
            ours.get_tensor("nope")
        with pytest.raises(safetensors.SafetensorError):
            ref.get_tensor("nope")


@pytest.mark.parametrize(
    "key",
    [
        slice(None),
        slice(1, 4),
        slice(None, None, 2),
        slice(1, None, 3),
        (slice(None), slice(2, 7, 2)),
        (slice(0, 5, 2), slice(None, None, 3)),
        2,
        (1, slice(1, 3)),
        (slice(10, 20),),
        Ellipsis,
    ],
)
def test_slices_with_steps_equal_safetensors(tmp_path, key):
    path = tmp_path / "m.safetensors"
    safetensors.torch.save_file({"x": torch.randn(6, 9), "b": torch.randn(6, 9).to(torch.bfloat16)}, path)
    with safetensors.safe_open(path, "pt") as ref, ks.safe_open(path, "pt") as ours:
        for name in ("x", "b"):
            assert same(ours.get_slice(name)[key], ref.get_slice(name)[key]), (name, key)


HOSTILE = {
    "empty": b"",
    "short length": b"\x08\x00\x00",
    "length past the end": b"\xff\x00\x00\x00\x00\x00\x00\x00{}",
    "huge length": b"\xff\xff\xff\xff\xff\xff\xff\x7f{}",
    "not json": b"\x05\x00\x00\x00\x00\x00\x00\x00{aaaa",
    "offsets past the data": b'\x3c\x00\x00\x00\x00\x00\x00\x00{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}    ',
    "shape against offsets": b'\x3c\x00\x00\x00\x00\x00\x00\x00{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,16]}}    '
    + bytes(16),
    "unknown dtype": b'\x3c\x00\x00\x00\x00\x00\x00\x00{"a":{"dtype":"X32","shape":[4],"data_offsets":[0,16]}}    '
    + bytes(16),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_malformed_files_raise_safetensor_error(tmp_path, case):
    data = HOSTILE[case]
    with pytest.raises(safetensors.SafetensorError):
        safetensors.torch.load(data)
    with pytest.raises(ks.SafetensorError) as caught:
        kt.load(data)
    assert isinstance(caught.value, tensorkit.TensorkitError)
    pickle.loads(pickle.dumps(caught.value))  # picklable, as safetensors' is
    path = tmp_path / "bad.safetensors"
    path.write_bytes(data)
    with pytest.raises(ks.SafetensorError):
        kt.load_file(path)


class Tied(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(10, 4)
        self.head = torch.nn.Linear(4, 10, bias=False)
        self.head.weight = self.embed.weight
        self.norm = torch.nn.LayerNorm(4)


def test_tied_weights_save_and_load_as_safetensors_does(tmp_path):
    model = Tied()
    safetensors.torch.save_model(model, tmp_path / "ref.safetensors")
    kt.save_model(model, tmp_path / "ours.safetensors")
    assert (tmp_path / "ours.safetensors").read_bytes() == (tmp_path / "ref.safetensors").read_bytes()
    fresh_ref, fresh_ours = Tied(), Tied()
    assert kt.load_model(fresh_ours, tmp_path / "ref.safetensors") == safetensors.torch.load_model(
        fresh_ref, tmp_path / "ref.safetensors"
    )
    for k, v in fresh_ref.state_dict().items():
        assert same(fresh_ours.state_dict()[k], v)
    assert fresh_ours.head.weight is fresh_ours.embed.weight


def test_shared_and_non_contiguous_tensors_are_refused_as_safetensors_refuses_them(tmp_path):
    base = torch.randn(4, 4)
    for tensors, error in [
        ({"a": base, "b": base}, RuntimeError),
        ({"a": base, "b": base[:2]}, RuntimeError),
        ({"t": base.t()}, ValueError),
        ({"s": torch.randn(3, 3).to_sparse()}, ValueError),
        ({"x": [1, 2]}, ValueError),
    ]:
        with pytest.raises(error):
            safetensors.torch.save_file(tensors, tmp_path / "ref.safetensors")
        with pytest.raises(error):
            kt.save_file(tensors, tmp_path / "ours.safetensors")
        assert not (tmp_path / "ours.safetensors").exists()
    # Disjoint views of one storage share nothing: both libraries write them.
    halves = {"lo": base[:2], "hi": base[2:]}
    assert kt._find_shared_tensors(halves) == safetensors.torch._find_shared_tensors(halves)


@pytest.mark.parametrize("strict", [True, False])
def test_load_model_strictness_matches(tmp_path, strict):
    class Other(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.norm = torch.nn.LayerNorm(4)
            self.extra = torch.nn.Linear(2, 2)

    path = tmp_path / "m.safetensors"
    safetensors.torch.save_model(Tied(), path)
    outcomes = []
    for lib in (safetensors.torch, kt):
        try:
            missing, unexpected = lib.load_model(Other(), path, strict=strict)
            outcomes.append((sorted(missing), sorted(unexpected)))
        except RuntimeError as e:
            outcomes.append(str(e))
    assert outcomes[0] == outcomes[1]


def test_helpers_answer_as_safetensors_does():
    model = Tied()
    sd = model.state_dict()
    assert kt._find_shared_tensors(sd) == safetensors.torch._find_shared_tensors(sd)
    assert kt._remove_duplicate_names(sd) == safetensors.torch._remove_duplicate_names(sd)
    assert kt._remove_duplicate_names(sd, preferred_names=["head.weight"]) == safetensors.torch._remove_duplicate_names(
        sd, preferred_names=["head.weight"]
    )
    for t in sd.values():
        assert kt.storage_ptr(t) == safetensors.torch.storage_ptr(t)
        assert kt.storage_size(t) == safetensors.torch.storage_size(t)


def test_top_level_serialize_and_deserialize(tmp_path):
    import numpy as np

    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    spec = dict(dtype="float32", shape=[2, 3], data_ptr=a.ctypes.data, data_len=a.nbytes)
    ours = ks.serialize({"a": ks.TensorSpec(**spec)}, metadata={"k": "v"})
    assert ours == safetensors.serialize({"a": safetensors.TensorSpec(**spec)}, metadata={"k": "v"})
    assert ours == safetensors.numpy.save({"a": a}, metadata={"k": "v"})
    assert ks.TensorSpec(**spec).dtype == safetensors.TensorSpec(**spec).dtype == "F32"
    # Beyond safetensors: the bytes as a buffer (checked) instead of an address.
    ks.serialize_file({"a": ks.TensorSpec(dtype="F32", shape=[2, 3], data=a)}, tmp_path / "a.safetensors")
    assert (tmp_path / "a.safetensors").read_bytes() == safetensors.numpy.save({"a": a})
    # As in safetensors 0.8, plain dicts are refused.
    for module in (ks, safetensors):
        with pytest.raises(TypeError):
            module.serialize({"a": spec})
    data = safetensors.torch.save(every_dtype(11))
    assert dict(ks.deserialize(data)) == dict(safetensors.deserialize(data))
    assert ks.__version__ == safetensors.__version__
    assert issubclass(ks.SafetensorError, tensorkit.TensorkitError)


def test_flax_and_numpy_modules_match_safetensors(tmp_path):
    import jax.numpy as jnp
    import numpy as np

    arrays = {"w": jnp.arange(12, dtype=jnp.float32).reshape(3, 4), "b": jnp.ones(3, dtype=jnp.bfloat16)}
    assert tensorkit.safetensors.flax.save(arrays) == safetensors.flax.save(arrays)
    safetensors.flax.save_file(arrays, tmp_path / "f.safetensors")
    ref = safetensors.flax.load_file(tmp_path / "f.safetensors")
    got = tensorkit.safetensors.flax.load_file(tmp_path / "f.safetensors")
    for k in ref:
        assert got[k].dtype == ref[k].dtype and bool(jnp.array_equal(got[k], ref[k]))
    with ks.safe_open(tmp_path / "f.safetensors", "flax") as f:
        assert bool(jnp.array_equal(f.get_slice("w")[1:, ::2], ref["w"][1:, ::2]))
    n = {"x": np.arange(5, dtype=np.int16)}
    assert tensorkit.safetensors.numpy.save(n) == safetensors.numpy.save(n)


def test_mlx_and_paddle_modules_match_safetensors(tmp_path):
    import mlx.core as mx
    import numpy as np
    import paddle
    import safetensors.mlx
    import safetensors.paddle

    import tensorkit.safetensors.mlx
    import tensorkit.safetensors.paddle

    arrays = {"w": mx.arange(12, dtype=mx.float32).reshape(3, 4), "i": mx.array([1, 2, 3], dtype=mx.int16)}
    assert tensorkit.safetensors.mlx.save(arrays) == safetensors.mlx.save(arrays)
    safetensors.mlx.save_file(arrays, tmp_path / "m.safetensors")
    ref = safetensors.mlx.load_file(tmp_path / "m.safetensors")
    got = tensorkit.safetensors.mlx.load_file(tmp_path / "m.safetensors")
    assert all(got[k].dtype == ref[k].dtype and mx.array_equal(got[k], ref[k]).item() for k in ref)

    tensors = {
        "w": paddle.arange(12, dtype="float32").reshape([3, 4]),
        "b": paddle.to_tensor([1.5, -2.0, 3.25], dtype="bfloat16"),
        "k": paddle.to_tensor([True, False]),
    }
    assert tensorkit.safetensors.paddle.save(tensors) == safetensors.paddle.save(tensors)
    tensorkit.safetensors.paddle.save_file(tensors, tmp_path / "p.safetensors", metadata={"a": "b"})
    assert (tmp_path / "p.safetensors").read_bytes() == safetensors.paddle.save(tensors, metadata={"a": "b"})
    ref = safetensors.paddle.load_file(tmp_path / "p.safetensors")
    for got in (
        tensorkit.safetensors.paddle.load_file(tmp_path / "p.safetensors"),
        tensorkit.safetensors.paddle.load((tmp_path / "p.safetensors").read_bytes()),
    ):
        for k in ref:
            assert got[k].dtype == ref[k].dtype and got[k].shape == ref[k].shape, k
            assert np.array_equal(got[k].numpy(), ref[k].numpy()), k
    with ks.safe_open(tmp_path / "p.safetensors", "paddle") as f:
        assert np.array_equal(f.get_slice("w")[1:, ::2].numpy(), ref["w"][1:, ::2].numpy())
    with ks.safe_open(tmp_path / "m.safetensors", "mlx") as f:
        assert mx.array_equal(f.get_tensor("w"), ref_w := safetensors.mlx.load_file(tmp_path / "m.safetensors")["w"]).item()
        assert mx.array_equal(f.get_slice("w")[:, 1:3], ref_w[:, 1:3]).item()


def test_a_missing_file_is_file_not_found_as_in_safetensors(tmp_path):
    for lib in (safetensors.torch, kt):
        with pytest.raises(FileNotFoundError):
            lib.load_file(tmp_path / "missing.safetensors")
    with pytest.raises(FileNotFoundError):
        tensorkit.safetensors.numpy.load_file(tmp_path / "missing.safetensors")


def test_metadata_that_is_not_str_to_str_is_refused_everywhere(tmp_path):
    import numpy as np

    bad = {"n": 1}
    for call in (
        lambda: kt.save({"w": torch.zeros(2)}, metadata=bad),
        lambda: kt.save_file({"w": torch.zeros(2)}, tmp_path / "t.safetensors", metadata=bad),
        lambda: tensorkit.safetensors.numpy.save({"w": np.zeros(2)}, metadata=bad),
        lambda: ks.serialize({"w": ks.TensorSpec(dtype="float32", shape=[1], data=b"1234")}, metadata=bad),
    ):
        with pytest.raises(ks.SafetensorError) as caught:
            call()
        assert isinstance(caught.value, ValueError)
