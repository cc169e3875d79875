"""The field-argument decoders of mldf._format against the vectors the Go definition of the
layouts writes (format/mldf/args.go, TestArgsVectors: testdata/golden/args.json)."""

import json
import os

import pytest

from mldf import _format

HERE = os.path.dirname(os.path.abspath(__file__))
VECTORS = os.path.join(os.path.dirname(os.path.dirname(HERE)), "testdata", "golden", "args.json")


def _vectors():
    with open(VECTORS) as f:
        return json.load(f)


@pytest.mark.parametrize("v", _vectors(), ids=lambda v: v["name"])
def test_args_vector(v):
    raw = bytes.fromhex(v["hex"]).ljust(_format.ARGUMENTS_SIZE, b"\0")
    got = _format.decode_arguments(v["type_id"], raw)
    want = dict(v["want"])
    if "shape" in want:
        want["shape"] = tuple(want["shape"])
    assert got == want


def test_vectors_cover_every_decoder():
    kinds = {_format.kind_of(v["type_id"]) for v in _vectors()}
    assert {_format.K_IMAGE, _format.K_AUDIO, _format.K_TEXT} <= kinds
    assert {_format.NDARRAY, _format.INT} <= {v["type_id"] for v in _vectors()}
