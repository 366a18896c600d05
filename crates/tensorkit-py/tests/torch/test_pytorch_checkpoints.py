"""PyTorch checkpoints read by tensorkit without torch.load: differential against
torch.load(weights_only=True) on the checkpoints scripts/reference/pytorch_checkpoints.py
wrote, and on checkpoints torch.save writes here; converted to safetensors as
safetensors.torch writes them; hostile pickles refused without running anything."""

from __future__ import annotations

import collections
import os
from pathlib import Path

import numpy as np
import pytest
import safetensors.torch
import torch

import tensorkit
import tensorkit.torch as tt

TESTDATA = Path(os.environ.get("TENSORKIT_TESTDATA", Path(__file__).parents[4] / "testdata"))
REFERENCE = TESTDATA / "pytorch" / "reference"
MALICIOUS = TESTDATA / "pytorch" / "malicious"
MARKER = Path("/tmp/tensorkit-pickle-ran")


def flat(obj, prefix=""):
    """torch.load's object as tensorkit names its tensors (NumPy arrays pickled beside
    tensors are tensors too)."""
    out = {}
    if isinstance(obj, np.ndarray):
        obj = torch.from_numpy(np.ascontiguousarray(obj.astype(obj.dtype.newbyteorder("="))))
    if isinstance(obj, torch.Tensor):
        out[prefix or "tensor"] = obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            out.update(flat(v, f"{prefix}.{k}" if prefix else str(k)))
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            out.update(flat(v, f"{prefix}.{i}" if prefix else str(i)))
    return out


def same(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    bits = lambda t: t.detach().contiguous().reshape(-1).view(torch.uint8)
    return torch.equal(bits(a), bits(b)) if a.numel() else True


@pytest.mark.parametrize("path", sorted(p for p in REFERENCE.glob("*.pt") if p.stem != "whole_module"), ids=lambda p: p.stem)
@pytest.mark.parametrize("backend", ["mmap", "pread"])
def test_load_file_equals_torch_load(path, backend):
    # NumPy values need torch's full unpickler: the fixture is ours, and trusted.
    theirs = flat(torch.load(path, weights_only=path.stem != "numpy_values"))
    ours = tt.load_file(path, backend=backend)
    assert sorted(ours) == sorted(theirs)
    for name, t in theirs.items():
        assert same(ours[name], t), name


def test_what_torch_saves_here_reads_back(tmp_path):
    g = torch.Generator().manual_seed(3)
    model = torch.nn.TransformerEncoderLayer(16, 2, dim_feedforward=32)
    sd = model.state_dict()
    sd["extra.bf16"] = torch.randn(3, 5, generator=g).to(torch.bfloat16)
    sd["extra.strided"] = torch.randn(6, 8, generator=g)[::2, 1::3]
    sd["extra.f8"] = torch.randn(4, generator=g).to(torch.float8_e5m2)
    path = tmp_path / "pytorch_model.bin"
    torch.save({"model": sd, "step": 10}, path)
    ours = tt.load_file(path)
    theirs = flat(torch.load(path, weights_only=True))
    assert sorted(ours) == sorted(theirs)
    for name, t in theirs.items():
        assert same(ours[name], t), name
    with tensorkit.open(path) as f:
        assert f.format == "pytorch"
        assert f.metadata["step"] == 10


def test_converted_as_safetensors_save_model_writes(tmp_path):
    model = torch.nn.Sequential(torch.nn.Embedding(7, 3), torch.nn.Linear(3, 7))
    model[1].weight = model[0].weight
    pt = tmp_path / "m.pt"
    torch.save(model.state_dict(), pt)
    ours = tmp_path / "ours.safetensors"
    theirs = tmp_path / "theirs.safetensors"
    tensorkit.convert(pt, ours, header_reserve=0)
    safetensors.torch.save_model(model, str(theirs))
    assert ours.read_bytes() == theirs.read_bytes()
    loaded = safetensors.torch.load_file(ours)
    assert torch.equal(loaded["0.weight"], model[0].weight.detach())


@pytest.mark.parametrize("path", sorted(MALICIOUS.glob("*.pt")), ids=lambda p: p.stem)
def test_hostile_checkpoints_are_refused(path):
    with pytest.raises(tensorkit.TensorkitError) as e:
        tt.load_file(path)
    assert e.value.kind in {"unsupported", "malformed", "limit_exceeded"}
    assert not MARKER.exists()


def test_a_whole_module_is_refused_by_name():
    with pytest.raises(tensorkit.TensorkitError, match="state_dict"):
        tt.load_file(REFERENCE / "whole_module.pt")
