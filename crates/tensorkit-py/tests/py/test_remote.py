"""Remote reads from Python: an HTTP server with ranges on 127.0.0.1 and moto's S3 server,
both started here (no internet)."""

from __future__ import annotations

import os
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

import tensorkit


class _Ranged(BaseHTTPRequestHandler):
    """Serves files from ``root`` with single ``Range`` requests (``a-b``, ``a-`` and the
    last ``n`` bytes, ``-n``), counting them."""

    root = "."
    requests: list[str] = []

    def log_message(self, *args):  # quiet
        pass

    def do_GET(self):
        type(self).requests.append(self.headers.get("Range", ""))
        path = os.path.join(self.root, self.path.lstrip("/"))
        if not os.path.isfile(path):
            self.send_error(404)
            return
        data = open(path, "rb").read()
        m = re.fullmatch(r"bytes=(\d*)-(\d*)", self.headers.get("Range", ""))
        if m and (m.group(1) or m.group(2)):
            if m.group(1):
                start = int(m.group(1))
                end = min(int(m.group(2)) + 1 if m.group(2) else len(data), len(data))
            else:  # the last n bytes
                start, end = max(len(data) - int(m.group(2)), 0), len(data)
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{end - 1}/{len(data)}")
            body = data[start:end]
        else:
            self.send_response(200)
            body = data
        self.send_header("Content-Length", str(len(body)))
        self.send_header("ETag", '"v1"')
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def served(tmp_path):
    handler = type("Handler", (_Ranged,), {"root": str(tmp_path), "requests": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield tmp_path, f"http://127.0.0.1:{server.server_port}", handler
    server.shutdown()


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
