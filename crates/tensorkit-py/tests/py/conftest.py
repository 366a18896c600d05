import os
import pathlib
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


@pytest.fixture(scope="session")
def testdata() -> pathlib.Path:
    return pathlib.Path(os.environ.get("TENSORKIT_TESTDATA", pathlib.Path(__file__).parents[4] / "testdata"))


class _Ranged(BaseHTTPRequestHandler):
    """Serves files from ``root`` with single ``Range`` requests (``a-b``, ``a-`` and the
    last ``n`` bytes, ``-n``), counting them; ``HEAD`` answers with the length."""

    root = "."
    requests: list[str] = []
    paths: list[str] = []

    def log_message(self, *args):  # quiet
        pass

    def do_HEAD(self):
        path = os.path.join(self.root, self.path.lstrip("/"))
        if not os.path.isfile(path):
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(os.path.getsize(path)))
        self.send_header("ETag", '"v1"')
        self.end_headers()

    def do_GET(self):
        type(self).requests.append(self.headers.get("Range", ""))
        type(self).paths.append(self.path)
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
    handler = type("Handler", (_Ranged,), {"root": str(tmp_path), "requests": [], "paths": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield tmp_path, f"http://127.0.0.1:{server.server_port}", handler
    server.shutdown()
