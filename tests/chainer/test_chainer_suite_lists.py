"""The names and the manifest of the vendored Chainer suite (chainer_suite/): a key is the same
for a test in Chainer's tree and in ours, whatever its parameter values print; the manifest
names a whole file, class or case where all of it fails."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "chainer_suite"))
sys.path.insert(0, str(ROOT / "scripts"))

from chainer_suite_lists import compressed  # noqa: E402
from suite_keys import entries_for, group, key  # noqa: E402

BACKEND = ("_use_chainerx_false__chainerx_device_None__use_cuda_false__cuda_device_None__"
           "use_cudnn_never__cudnn_deterministic_false__autotune_false__cudnn_fast_batch_"
           "normalization_false__use_ideep_never")


def test_a_key_drops_the_values_and_the_backend_and_keeps_the_case():
    chainer_id = ("tests/chainer_tests/functions_tests/connection_tests/test_linear.py::"
                  f"TestLinear{BACKEND}_param_3_{{x_shape={{'n': 1, 'd': (3,)}}, f=<function "
                  "relu at 0x7f00aa>}::test_backward")
    ours = ("chainer_suite/chainer_tests/functions_tests/connection_tests/test_linear.py::"
            "TestLinear_param_0_{a=1}_param_3_{x_shape=(2, 3)}" + BACKEND + "::test_backward")
    assert key(chainer_id) == \
        "functions_tests/connection_tests/test_linear.py::TestLinear_param_3::test_backward"
    assert key(ours) == "functions_tests/connection_tests/test_linear.py::" \
        "TestLinear_param_0_param_3::test_backward"
    assert group(key(chainer_id)) == "functions" and group("test_link.py::T::t") == "the rest"


def test_the_entries_that_hold_a_key():
    assert entries_for("f.py::TestA_param_2::test_x") == [
        "f.py", "f.py::TestA", "f.py::TestA_param_2", "f.py::TestA_param_2::test_x"]
    assert entries_for("f.py::test_fn") == ["f.py", "f.py::test_fn"]


def test_the_manifest_is_as_coarse_as_the_failures_allow():
    reference = ["a.py::T_param_0::x", "a.py::T_param_0::y", "a.py::T_param_1::x",
                 "b.py::U::x", "b.py::U::y", "b.py::V::x", "b.py::test_f",
                 "c.py::W_param_0::x", "c.py::W_param_0::y"]
    failing = ["a.py::T_param_0::x", "a.py::T_param_0::y", "a.py::T_param_1::x",
               "b.py::U::x", "b.py::V::x", "b.py::test_f", "c.py::W_param_0::y"]
    assert compressed(failing, reference) == [
        "a.py", "b.py::U::x", "b.py::V", "b.py::test_f", "c.py::W_param_0::y"]
    entries = set(compressed(failing, reference))
    held = {k for k in reference if any(e in entries for e in entries_for(k))}
    assert held == set(failing)
