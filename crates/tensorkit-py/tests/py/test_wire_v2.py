"""Tensogram wire version 2 files written by tensogram 0.14.0 and 0.16.1: tensorkit reads
them, and what ``tensorkit.migrate`` writes, tensogram 0.24 (which refuses version 2) reads
to the same values."""

import hashlib
import json

import numpy as np
import pytest
import tensogram

import tensorkit


def _fixtures(testdata):
    return sorted((testdata / "tensogram" / "reference" / "v2").glob("*.tgm"))


def _sha256_le(a: np.ndarray) -> str:
    le = a.astype(a.dtype.newbyteorder("<"), copy=False)
    return hashlib.sha256(np.ascontiguousarray(le).tobytes()).hexdigest()


def test_tensogram_0_24_refuses_version_2_and_reads_what_migrate_writes(testdata, tmp_path):
    files = _fixtures(testdata)
    assert len(files) >= 10
    for path in files:
        sidecar = json.loads(path.with_suffix(".json").read_text())
        want = [o["sha256"] for m in sidecar["messages"] for o in m["objects"]]
        with pytest.raises(Exception):
            tensogram.decode(path.read_bytes())
        ours = tensorkit.open(path)
        assert [_sha256_le(ours.get(n)) for n in ours] == want, path.name
        out = tmp_path / f"{path.stem}.v3.tgm"
        done = tensorkit.migrate(path, out, fsync="raw" in path.name)
        assert done["v2_messages"] == len(sidecar["messages"])
        assert (done["hashes_verified"] > 0) == ("nohash" not in path.name)
        got = []
        messages = tensogram.iter_messages(out.read_bytes(), verify_hash=True)
        for (meta, objects), written in zip(messages, sidecar["messages"], strict=True):
            assert [b.get("name") for b in meta.base] == [b.get("name") for b in written["base"]]
            assert {k: meta.extra[k] for k in written["extra"]} == written["extra"]
            got.extend(_sha256_le(np.asarray(arr)) for _, arr in objects)
        assert got == want, path.name


def test_migrating_a_version_3_file_is_refused(tmp_path):
    tensorkit.save(tmp_path / "x.tgm", {"a": np.arange(3.0)})
    with pytest.raises(tensorkit.InvalidArgumentError):
        tensorkit.migrate(tmp_path / "x.tgm", tmp_path / "y.tgm")
    assert not (tmp_path / "y.tgm").exists()
