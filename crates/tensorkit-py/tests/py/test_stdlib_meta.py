"""tensorkit.stdlib_meta: @stdlib/ndarray's meta data record, byte for byte."""

import json

import numpy as np
import pytest

import tensorkit
from tensorkit import stdlib_meta

FIELDS = ("dtype", "shape", "strides_bytes", "offset_bytes", "order", "mode", "submodes", "flags", "readonly", "endianness", "byte_length")


def valid_fixtures(testdata):
    root = testdata / "stdlib" / "conformance"
    return sorted(root.glob("*.bin")) + sorted((root / "derived_be").glob("*.bin"))


def test_every_record_stdlib_wrote_reads_as_its_sidecar_and_writes_back_identically(testdata):
    files = valid_fixtures(testdata)
    assert len(files) > 40
    for path in files:
        sidecar = json.loads(path.with_suffix(".json").read_text())
        record = path.read_bytes()
        fields = stdlib_meta.deserialize(record)
        for key in FIELDS:
            assert fields[key] == sidecar[key], (path.name, key)
        assert stdlib_meta.serialize(fields) == record, path.name


def test_damaged_records_raise_tensorkit_errors(testdata):
    files = sorted((testdata / "stdlib" / "conformance" / "bad").glob("*.bin"))
    assert files
    for path in files:
        with pytest.raises(tensorkit.TensorkitError):
            stdlib_meta.deserialize(path.read_bytes())


def test_a_record_from_a_dict_or_an_array_views_the_same_values_without_copying():
    record = stdlib_meta.serialize({"dtype": "float64", "shape": [2, 3]})
    assert len(record) == 66 and stdlib_meta.deserialize(record)["strides_bytes"] == [24, 8]

    base = np.arange(12, dtype=">i4").reshape(3, 4)
    walked = base[::-1, ::2]  # negative and non-unit strides, big-endian
    record = stdlib_meta.serialize(walked)
    fields = stdlib_meta.deserialize(record)
    assert (fields["shape"], fields["strides_bytes"], fields["offset_bytes"]) == ([3, 2], [-16, 8], 32)
    assert fields["endianness"] == 0
    data = bytearray(base.tobytes())
    view = stdlib_meta.view(record, data)
    assert np.array_equal(view, walked)
    data[32:36] = (99).to_bytes(4, "big")  # the first element, seen through the view
    assert view[0, 0] == 99

    column_major = np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert stdlib_meta.deserialize(stdlib_meta.serialize(column_major))["order"] == "column-major"


def test_views_never_reach_outside_the_buffer():
    record = stdlib_meta.serialize({"dtype": "int16", "shape": [3, 4], "strides_bytes": [-2, -6], "offset_bytes": 22})
    assert stdlib_meta.view(record, np.arange(12, dtype=np.int16).tobytes())[0, 0] == 11
    with pytest.raises(tensorkit.InvalidArgumentError, match="reaches bytes"):
        stdlib_meta.view(record, b"\0" * 20)
    with pytest.raises(tensorkit.InvalidArgumentError, match="dtype"):
        stdlib_meta.serialize({"dtype": "float128", "shape": [1]})
    readonly = stdlib_meta.serialize({"dtype": "uint8", "shape": [2], "readonly": True})
    assert not stdlib_meta.view(readonly, bytearray(2)).flags.writeable
