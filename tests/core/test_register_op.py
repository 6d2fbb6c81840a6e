"""`register_op`: the call form `register_op("swish", Swish)` and the decorator forms, and the
README's custom-op example runs as written."""

import re
from pathlib import Path

import numpy as np
import pytest

import graphcore
from graphcore import errors, registry

README = Path(__file__).resolve().parents[2] / "README.md"


def _op(name=None):
    class Op(graphcore.FunctionNode):
        arity = 1

        def forward(self, inputs):
            return inputs[0] * 2,

        def backward(self, indexes, grad_outputs):
            return grad_outputs[0] * 2,

    if name:
        Op.name = name
    return Op


@pytest.fixture
def names():
    taken = []
    yield taken
    for name in taken:
        registry._ops.pop(name, None)


def test_every_spelling_registers(names):
    names += ["reg_call", "reg_plain", "reg_named", "reg_keyword"]
    a = _op()
    assert graphcore.register_op("reg_call", a) is a and graphcore.get_op("reg_call") is a
    assert a.name == "reg_call"
    b = graphcore.register_op(_op("reg_plain"))
    assert graphcore.get_op("reg_plain") is b
    c = graphcore.register_op("reg_named")(_op())
    assert graphcore.get_op("reg_named") is c
    d = graphcore.register_op(name="reg_keyword")(_op())
    assert graphcore.get_op("reg_keyword") is d
    e = graphcore.register_op("reg_keyword", _op(), replace=True)
    assert graphcore.get_op("reg_keyword") is e


class _Other(graphcore.FunctionNode):
    arity = 1


def test_wrong_spellings_say_what_register_op_takes(names):
    names.append("reg_taken")
    graphcore.register_op("reg_taken", _op())
    with pytest.raises(errors.RegistryError, match="'reg_taken' is already registered"):
        graphcore.register_op("reg_taken", _Other)
    with pytest.raises(TypeError, match=r"register_op\(name, cls\): the name .* comes first"):
        graphcore.register_op(_op(), "reg_swapped")
    with pytest.raises(TypeError, match="register_op: expected a FunctionNode subclass, got "
                                        "int"):
        graphcore.register_op("reg_int", 3)
    with pytest.raises(TypeError, match="register_op: expected a FunctionNode subclass, got "
                                        "str"):
        graphcore.register_op("reg_str", "Swish")
    with pytest.raises(TypeError, match="the name is given twice"):
        graphcore.register_op("a", _op(), name="b")
    with pytest.raises(errors.RegistryError, match="needs a string `name`"):
        graphcore.register_op(_op())
    assert "reg_swapped" not in graphcore.all_ops() and "reg_int" not in graphcore.all_ops()


def test_a_redefined_class_replaces_itself_like_a_rerun_cell(names):
    names.append("reg_rerun")
    first, second = _op(), _op()  # same module and qualified name: one class, defined twice
    graphcore.register_op("reg_rerun", first)
    assert graphcore.register_op("reg_rerun", second) is second
    assert graphcore.get_op("reg_rerun") is second


def test_the_readme_custom_op_example_runs_as_written(tmp_path, monkeypatch):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    block = next(b for b in blocks if 'register_op("swish", Swish)' in b)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    try:
        exec(compile(block, str(README), "exec"), namespace)  # noqa: S102 - our own README
        z = namespace["z"]
        s = 1 / (1 + np.exp(-z.array))
        np.testing.assert_allclose(z.grad, s + z.array * s * (1 - s), rtol=1e-5)
        assert graphcore.get_op("swish") is namespace["Swish"]
        again: dict = {}
        exec(compile(block, str(README), "exec"), again)  # noqa: S102 - a re-run replaces it
        assert graphcore.get_op("swish") is again["Swish"]
    finally:
        registry._ops.pop("swish", None)
    assert not list(tmp_path.iterdir())
