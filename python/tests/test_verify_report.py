"""Reader.verify() reports under the names `convert verify --json` gives the same things, and
still answers to the names of release 0.1 (deprecated) for one release."""

import json
import os
import warnings

import pytest

import mldf
from interop_util import convert_bin, run  # noqa: F401 (convert_bin is a fixture)
from test_fixtures import FIXTURES

# Keys of verify() that convert verify --json has no counterpart for.
PYTHON_ONLY = {"crc_bytes"}
OLD_NAMES = {"samples": "num_samples", "fields": "num_fields", "entries": "num_payloads",
             "class_names": "num_class_name_fields"}


@pytest.mark.parametrize("name", FIXTURES)
def test_verify_keys_are_go_keys(fixtures_dir, convert_bin, name):
    path = os.path.join(fixtures_dir, name + ".mldf")
    go = json.loads(run(convert_bin, "verify", path, "--json").stdout)
    with mldf.open(path) as r:
        rep = r.verify()
    missing = set(rep) - PYTHON_ONLY - set(go)
    assert not missing, "verify() keys that convert verify --json does not have: %s" % sorted(missing)
    for k in set(rep) - PYTHON_ONLY:
        assert rep[k] == go[k], "%s: verify()[%r] is %r, convert verify --json says %r" % (name, k, rep[k], go[k])


def test_verify_old_keys_deprecated(fixtures_dir):
    with mldf.open(os.path.join(fixtures_dir, "scalars.mldf")) as r:
        rep = r.verify()
    assert not set(OLD_NAMES) & set(rep), "the old names are not listed"
    assert json.loads(json.dumps(rep)) == dict(rep)
    for old, new in OLD_NAMES.items():
        assert old not in rep
        with pytest.warns(DeprecationWarning, match=new):
            assert rep[old] == rep[new]
        with pytest.warns(DeprecationWarning, match=new):
            assert rep.get(old) == rep[new]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert rep.get("num_samples") == rep["num_samples"]
        assert rep.get("nope", 7) == 7
        with pytest.raises(KeyError):
            rep["nope"]
