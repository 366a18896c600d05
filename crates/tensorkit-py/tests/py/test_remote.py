"""Remote reads from Python: an HTTP server with ranges on 127.0.0.1 and moto's S3 server,
both started here (no internet)."""

from __future__ import annotations

import os

import numpy as np
import pytest

import tensorkit


def _tensors(n: int = 300) -> dict[str, np.ndarray]:
    return {f"w{i}": np.full((64, 64), i, dtype=np.float32) for i in range(n)}


@pytest.mark.parametrize("ext", ["safetensors", "bt", "zt", "tgm"])
def test_open_a_url_reads_the_header_then_only_what_is_indexed(served, ext):
    root, base, handler = served
    tensors = _tensors()
    tensorkit.save(root / f"x.{ext}", tensors)
    f = tensorkit.open(f"{base}/x.{ext}")
    listed = len(handler.requests)
    assert listed <= 3, handler.requests
    assert f.transfer.requests == listed
    header_bytes = f.transfer.bytes
    assert 0 < header_bytes < (root / f"x.{ext}").stat().st_size // 10
    assert sorted(f) == sorted(tensors)
    np.testing.assert_array_equal(f["w123"], tensors["w123"])
    assert len(handler.requests) == listed + 1, handler.requests
    assert f.transfer == tensorkit.Transfer(listed + 1, f.transfer.bytes)
    assert f.transfer.bytes - header_bytes >= tensors["w123"].nbytes
    assert tuple(f.info("w5")["shape"]) == (64, 64)


def test_a_local_file_has_no_transfer(tmp_path):
    tensorkit.save(tmp_path / "x.safetensors", _tensors(2))
    assert tensorkit.open(tmp_path / "x.safetensors").transfer is None


def test_a_missing_object_raises_an_os_error(served):
    _, base, _ = served
    with pytest.raises(OSError, match="not found"):
        tensorkit.open(f"{base}/missing.safetensors")


def test_s3_with_credentials_and_a_custom_endpoint(tmp_path, monkeypatch):
    moto_server = pytest.importorskip("moto.server")
    boto3 = pytest.importorskip("boto3")
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        for k, v in {
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_REGION": "us-east-1",
            "AWS_DEFAULT_REGION": "us-east-1",
        }.items():
            monkeypatch.setenv(k, v)
        s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
        s3.create_bucket(Bucket="weights")
        tensors = _tensors(20)
        tensorkit.save(tmp_path / "m.safetensors", tensors)
        s3.upload_file(str(tmp_path / "m.safetensors"), "weights", "models/m.safetensors")
        f = tensorkit.open(
            "s3://weights/models/m.safetensors",
            storage_options={"aws_endpoint": endpoint, "aws_allow_http": "true"},
        )
        assert sorted(f) == sorted(tensors)
        np.testing.assert_array_equal(f["w7"], tensors["w7"])
        # The endpoint from the environment, as the AWS tools take it.
        monkeypatch.setenv("AWS_ENDPOINT", endpoint)
        g = tensorkit.open("s3://weights/models/m.safetensors")
        np.testing.assert_array_equal(g["w19"], tensors["w19"])
        # Wrong credentials are refused, clearly.
        with pytest.raises(OSError):
            tensorkit.open("s3://weights/models/absent.safetensors")
    finally:
        server.stop()
