"""DLPack: tensorkit's tensor handles into torch, jax and numpy without copies."""

from __future__ import annotations

import gc

import jax.numpy as jnp
import numpy as np
import pytest
import safetensors.torch
import torch
from torch.utils.dlpack import from_dlpack as torch_from_capsule

import tensorkit
import tensorkit.torch
from test_safetensors_torch import every_dtype, same

# What DLPack 1.0 has a whole-byte form of (float4 is held in pairs by torch, not here).
SHARED = [k for k in every_dtype() if k not in ("float4_e2m1fn_x2",)]


@pytest.fixture
def checkpoint(tmp_path):
    path = tmp_path / "m.safetensors"
    tensors = every_dtype(21)
    safetensors.torch.save_file(tensors, path)
    return path, tensors


def test_torch_takes_every_dtype_without_a_copy(checkpoint):
    path, tensors = checkpoint
    with tensorkit.open(path) as f:
        for k in SHARED:
            got = torch.from_dlpack(f.tensor(k))
            assert same(got, tensors[k]), k
            if got.numel():
                view = f[k] if k not in ("bfloat16",) and not k.startswith("float8") else None
                if view is not None:  # the same bytes as the read-only mapping shows
                    assert got.data_ptr() == view.ctypes.data, k


def test_jax_and_numpy_take_them_too(checkpoint):
    path, tensors = checkpoint
    with tensorkit.open(path) as f:
        for k in ("float32", "bfloat16", "int32", "float8_e4m3fn", "bool"):  # (jax holds int64 as int32 by default)
            j = jnp.from_dlpack(f.tensor(k))
            want = tensors[k].reshape(-1).view(torch.uint8).numpy()
            assert np.array_equal(np.asarray(j).reshape(-1).view(np.uint8), want), k
        a = np.from_dlpack(f.tensor("float32"))
        assert not a.flags.writeable  # the versioned capsule says the mapping is read-only
        assert np.array_equal(a, tensors["float32"].numpy())


def test_file_arrays_go_to_jax_without_a_copy(checkpoint):
    # `f[name]` is a read-only view of the mapping; jax asks for the legacy capsule, which
    # cannot say so: it gets the same bytes over a private copy-on-write mapping.
    path, tensors = checkpoint
    before = path.read_bytes()
    with tensorkit.open(path) as f:
        # (jax holds float64 as float32 and int64 as int32 by default.)
        for k in ("float32", "int32", "int16", "int8", "uint8", "bool"):
            a = f[k]
            assert isinstance(a, np.ndarray) and not a.flags.writeable
            j = jnp.from_dlpack(a)
            assert np.array_equal(np.asarray(j), tensors[k].numpy()), k
        a = f["float64"]
        capsule_tensor = torch_from_capsule(a.__dlpack__())
        assert capsule_tensor.data_ptr() != a.ctypes.data  # the private mapping's address
        assert same(capsule_tensor, tensors["float64"])
        capsule_tensor += 1  # writable, and nothing reaches the file or the shared mapping
        assert np.array_equal(f["float64"], tensors["float64"].numpy())
        # A slice of the mapping goes the same way; a strided view as a copy.
        a = f["float32"]
        flat = tensors["float32"].reshape(-1).numpy()
        part = a.reshape(-1)[3:9]
        assert np.array_equal(np.asarray(jnp.from_dlpack(part)), flat[3:9])
        strided = a.reshape(-1)[::2]
        assert np.array_equal(np.asarray(jnp.from_dlpack(strided)), flat[::2])
        with pytest.raises(BufferError):
            strided.__dlpack__(copy=False)
        # Arrays computed from them are numpy's own business.
        assert np.array_equal(np.asarray(jnp.from_dlpack(a * 2)), tensors["float32"].numpy() * 2)
        # The versioned capsule still says read-only.
        assert not np.from_dlpack(a).flags.writeable
        kept = f["int32"]
    # After the file is closed, its arrays still export (as copies where no mapping is left).
    assert np.array_equal(np.asarray(jnp.from_dlpack(kept)), tensors["int32"].numpy())
    assert path.read_bytes() == before


def test_the_legacy_capsule_hands_over_a_private_writable_mapping(checkpoint):
    path, tensors = checkpoint
    before = path.read_bytes()
    with tensorkit.open(path) as f:
        t = torch_from_capsule(f.tensor("float32").__dlpack__())
        t += 1  # writable; the write lands in a private copy of the page
        assert torch.equal(t, tensors["float32"] + 1)
        assert np.array_equal(f["float32"], tensors["float32"].numpy())
    assert path.read_bytes() == before


def test_copies_and_refusals(checkpoint, tmp_path):
    path, tensors = checkpoint
    with tensorkit.open(path) as f:
        c = np.from_dlpack(f.tensor("float32"), copy=True)
        c[...] = 0
        assert np.array_equal(f["float32"], tensors["float32"].numpy())
        with pytest.raises(BufferError):
            f.tensor("float32").__dlpack__(dl_device=(2, 0))
        with pytest.raises(BufferError):
            f.tensor("float4_e2m1fn_x2").__dlpack__(max_version=(1, 0))
        f.tensor("int8").__dlpack__()  # a capsule nobody takes is freed with it
        f.tensor("int8").__dlpack__(max_version=(1, 0))
        gc.collect()
        assert f.tensor("int8").__dlpack_device__() == (1, 0)
        with pytest.raises(KeyError):
            f.tensor("nope")
    # Decoded tensors (here zstd in Tensogram) hand over memory of their own.
    tensorkit.torch.save_file({"w": tensors["float32"]}, tmp_path / "z.tgm", pipeline="zstd")
    with tensorkit.open(tmp_path / "z.tgm") as f:
        w = torch_from_capsule(f.tensor("w").__dlpack__())
        w.mul_(2)
        assert torch.equal(w, tensors["float32"] * 2)


def test_tensors_keep_the_mapping_alive(checkpoint):
    path, tensors = checkpoint
    f = tensorkit.open(path)
    t = torch.from_dlpack(f.tensor("float64"))
    j = jnp.from_dlpack(f.tensor("int32"))
    f.close()
    del f
    gc.collect()
    path.unlink()
    assert same(t, tensors["float64"])
    assert np.array_equal(np.asarray(j), tensors["int32"].numpy())
