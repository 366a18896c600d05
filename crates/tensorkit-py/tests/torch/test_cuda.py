"""Loads to a CUDA device against safetensors' own: every dtype, staging buffers smaller
than a tensor and larger than the file, every way safetensors names a device, decoded
formats, models and slices. Skipped where torch sees no GPU (CI); run on the lent GPU
machines with the device-load measurement (docs/python.md, "Loading to a GPU")."""

from __future__ import annotations

import pytest
import safetensors
import safetensors.torch
import torch

import tensorkit.safetensors as ks
import tensorkit.safetensors.torch as kt
import tensorkit.torch as tt
from test_safetensors_torch import Tied, every_dtype, same
from test_torch import _mixed

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="torch sees no CUDA device")


def _on_cpu_equal(got: dict[str, torch.Tensor], ref: dict[str, torch.Tensor], what: object) -> None:
    assert sorted(got) == sorted(ref), what
    for k, v in ref.items():
        assert got[k].device.type == "cuda", (what, k, got[k].device)
        assert same(got[k].cpu(), v.cpu()), (what, k)


@pytest.mark.parametrize("device", ["cuda", "cuda:0", 0, torch.device("cuda", 0)])
def test_every_dtype_lands_on_the_device_as_safetensors_puts_it(tmp_path, device):
    path = tmp_path / "m.safetensors"
    safetensors.torch.save_file(every_dtype(3) | _mixed(), path)
    ref = safetensors.torch.load_file(path, device="cuda:0")
    _on_cpu_equal(kt.load_file(path, device=device), ref, device)
    for staging in (1, 7, 1000, 1 << 26):
        _on_cpu_equal(tt.load_file(path, device, staging_bytes=staging, threads=3), ref, staging)


@pytest.mark.parametrize("ext,options", [("zt", {}), ("tgm", {"pipeline": "zstd"}), ("bt", {})])
def test_other_formats_load_to_the_device(tmp_path, ext, options):
    tensors = _mixed(11)
    path = tmp_path / f"m.{ext}"
    tt.save_file(tensors, path, **options)
    for staging in (5, None):
        _on_cpu_equal(tt.load_file(path, "cuda", staging_bytes=staging), tensors, (ext, staging))


def test_safe_open_on_the_device_answers_as_safetensors_does(tmp_path):
    path = tmp_path / "m.safetensors"
    safetensors.torch.save_file({"w": torch.randn(6, 10), "b": torch.arange(7, dtype=torch.int32)}, path)
    with safetensors.safe_open(path, framework="pt", device="cuda:0") as ref, ks.safe_open(
        path, framework="pt", device="cuda:0"
    ) as ours:
        assert ours.keys() == ref.keys()
        for k in ref.keys():
            assert ours.get_tensor(k).device == ref.get_tensor(k).device
            assert same(ours.get_tensor(k).cpu(), ref.get_tensor(k).cpu())
        a, b = ours.get_slice("w")[1:5:2, ::3], ref.get_slice("w")[1:5:2, ::3]
        assert a.device == b.device and same(a.cpu(), b.cpu())


def test_models_on_the_device_save_and_load_as_safetensors_does(tmp_path):
    model = Tied().cuda()
    safetensors.torch.save_model(model, tmp_path / "ref.safetensors")
    kt.save_model(model, tmp_path / "ours.safetensors")
    assert (tmp_path / "ours.safetensors").read_bytes() == (tmp_path / "ref.safetensors").read_bytes()
    fresh_ref, fresh_ours = Tied().cuda(), Tied().cuda()
    assert kt.load_model(fresh_ours, tmp_path / "ref.safetensors", device="cuda") == safetensors.torch.load_model(
        fresh_ref, tmp_path / "ref.safetensors", device="cuda"
    )
    for k, v in fresh_ref.state_dict().items():
        assert fresh_ours.state_dict()[k].device == v.device
        assert same(fresh_ours.state_dict()[k].cpu(), v.cpu())
    assert fresh_ours.head.weight is fresh_ours.embed.weight


def test_device_tensors_save_byte_identical(tmp_path):
    tensors = {k: v.cuda() for k, v in every_dtype(4).items()}
    safetensors.torch.save_file(tensors, tmp_path / "ref.safetensors")
    kt.save_file(tensors, tmp_path / "ours.safetensors")
    assert (tmp_path / "ours.safetensors").read_bytes() == (tmp_path / "ref.safetensors").read_bytes()
    tt.save_file(tensors, tmp_path / "any.safetensors", header_reserve=0)
    assert (tmp_path / "any.safetensors").read_bytes() == (tmp_path / "ref.safetensors").read_bytes()
