"""Wrong calls to the public Python API fail with a typed error that names the API.

Each case is a call a user might plausibly get wrong (a wrong type, a wrong shape, a value out
of range). It must raise ``TypeError`` / ``ValueError`` (or one of graphcore's typed errors,
which derive from them), never a bare ``AttributeError`` or a message that names no API, and
never be accepted silently. The op-attribute cases are driven by the registry, so an op added
later is covered as soon as it declares its attributes.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import graphcore
import graphcore.functions as F
import graphcore.links as L
from graphcore import Variable, errors, gradient_check, serializers
from graphcore import spec as gspec
from graphcore.function_node import Attr
from graphcore.registry import all_ops

SPECS = Path(__file__).resolve().parents[2] / "specs"


def x32(*shape):
    return Variable(np.ones(shape or (2, 3), np.float32))


def ids():
    return np.array([0, 1], np.int32)


def seed_spec():
    return gspec.load_spec_file(str(SPECS / "seed_static.yaml"))


class _Model(graphcore.Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.l1 = L.Linear(3, 2)

    def forward(self, x):
        return F.sum(self.l1(x))


def _setup(optimizer):
    return optimizer.setup(_Model())


def _grad_set(value):
    v = x32()
    v.grad = value


def _data_set(value):
    v = x32()
    v.data = value


def _output():
    x = x32()
    return x, F.relu(x)


# (id, call, expected exception class, regex the message must match: it names the API)
CASES = [
    # --- Variable -------------------------------------------------------------------------
    ("variable-str", lambda: Variable("abc"), TypeError, r"Variable"),
    ("variable-list", lambda: Variable([1.0, 2.0]), TypeError, r"Variable"),
    ("variable-str-array", lambda: Variable(np.array(["a"])), errors.DTypeError, r"Variable"),
    ("variable-object-array", lambda: Variable(np.array([object()])), errors.DTypeError,
     r"Variable"),
    ("variable-datetime-array", lambda: Variable(np.array(["2020-01-01"], "datetime64[D]")),
     errors.DTypeError, r"Variable"),
    ("variable-name", lambda: Variable(np.ones(2), name=3), TypeError, r"Variable.*name"),
    ("variable-requires-grad", lambda: Variable(np.ones(2), requires_grad="yes"), TypeError,
     r"Variable.*requires_grad"),
    ("variable-grad-shape", lambda: Variable(np.ones(2), grad=np.ones(3)), errors.ShapeError,
     r"Variable.*grad"),
    ("grad-setter-shape", lambda: _grad_set(np.ones((3, 2), np.float32)), errors.ShapeError,
     r"Variable\.grad.*\(3, 2\).*\(2, 3\)"),
    ("grad-setter-dtype", lambda: _grad_set(np.ones((2, 3), np.float64)), errors.DTypeError,
     r"Variable\.grad.*float64.*float32"),
    ("grad-setter-list", lambda: _grad_set([[1.0] * 3] * 2), TypeError, r"Variable\.grad"),
    ("data-setter-str", lambda: _data_set("abc"), TypeError, r"Variable"),
    ("data-setter-str-array", lambda: _data_set(np.array(["a"])), errors.DTypeError,
     r"Variable"),
    ("parameter-initializer", lambda: graphcore.Parameter("abc", (2,)), TypeError,
     r"initializer"),
    # --- backward and graphcore.grad ------------------------------------------------------
    ("grad-strings", lambda: graphcore.grad("a", "b"), TypeError, r"grad\(\).*outputs"),
    ("grad-input-string", lambda: graphcore.grad(F.sum(x32()), [x32(), "b"]), TypeError,
     r"grad\(\).*inputs"),
    ("grad-outputs-count", lambda: graphcore.grad([_output()[1]], [x32()],
                                                  grad_outputs=[None, None]),
     ValueError, r"grad\(\).*grad_outputs"),
    ("grad-outputs-shape", lambda: graphcore.grad(*reversed(_output()),
                                                  grad_outputs=[np.ones(5, np.float32)]),
     errors.ShapeError, r"grad\(\).*grad_output.*\(5,\).*\(2, 3\)"),
    ("grad-outputs-type", lambda: graphcore.grad(*reversed(_output()), grad_outputs=["x"]),
     TypeError, r"grad\(\).*grad_output"),
    # --- F.* wrappers (attributes are checked by the op, see the registry-driven test) -----
    ("reshape-none", lambda: F.reshape(x32(), None), TypeError, r"Reshape.*'shape'"),
    ("reshape-str-item", lambda: F.reshape(x32(), (3, "2")), TypeError, r"Reshape.*'shape'"),
    ("reshape-float-item", lambda: F.reshape(x32(), (3, 2.0)), TypeError, r"Reshape.*'shape'"),
    ("cast-none", lambda: F.cast(x32(), None), TypeError, r"Cast.*'dtype'"),
    ("cast-unknown", lambda: F.cast(x32(), "float99"), TypeError, r"Cast.*'dtype'"),
    ("cast-str-dtype", lambda: F.cast(x32(), str), TypeError, r"Cast.*'dtype'"),
    ("transpose-str", lambda: F.transpose(x32(), "ab"), TypeError, r"Transpose.*'axes'"),
    ("sum-axis-str", lambda: F.sum(x32(), axis="0"), TypeError, r"Sum.*'axis'"),
    ("sum-axis-float", lambda: F.sum(x32(), axis=1.5), TypeError, r"Sum.*'axis'"),
    ("sum-axis-bool", lambda: F.sum(x32(), axis=True), TypeError, r"Sum.*'axis'"),
    ("mean-keepdims", lambda: F.mean(x32(), keepdims="yes"), TypeError, r"Mean.*'keepdims'"),
    ("max-axis-items", lambda: F.max(x32(), axis=[0, "a"]), TypeError, r"Max.*'axis'"),
    ("leaky-relu-str", lambda: F.leaky_relu(x32(), slope="0.2"), TypeError,
     r"LeakyReLU.*'slope'"),
    ("leaky-relu-negative", lambda: F.leaky_relu(x32(), slope=-1), ValueError,
     r"LeakyReLU.*'slope'.*at least 0"),
    ("dropout-ratio-high", lambda: F.dropout(x32(), ratio=1.5), ValueError,
     r"Dropout.*'ratio'.*at most 1"),
    ("dropout-ratio-nan", lambda: F.dropout(x32(), ratio=float("nan")), ValueError,
     r"Dropout.*'ratio'"),
    ("softmax-axis-str", lambda: F.softmax(x32(), axis="1"), TypeError, r"Softmax.*'axis'"),
    ("softmax-ce-reduce", lambda: F.softmax_cross_entropy(x32(), ids(), reduce="sum"),
     ValueError, r"softmax_cross_entropy: reduce must be 'mean' or 'no', got 'sum'"),
    ("concat-axis-str", lambda: F.concat([x32(), x32()], axis="1"), TypeError,
     r"Concat.*'axis'"),
    ("split-str", lambda: F.split_axis(x32(), "2"), TypeError,
     r"SplitAxis.*'indices_or_sections'"),
    ("clip-str", lambda: F.clip(x32(), "0", 1.0), TypeError, r"Clip.*'x_min'"),
    ("embed-ignore-str", lambda: F.embed_id(ids(), x32(4, 3), ignore_label="a"), TypeError,
     r"EmbedID.*'ignore_label'"),
    ("op-missing-attribute", lambda: graphcore.get_op("reshape")(), TypeError, r"Reshape"),
    ("relu-str", lambda: F.relu("abc"), TypeError, r"ReLU"),
    ("relu-none", lambda: F.relu(None), TypeError, r"ReLU"),
    ("relu-str-array", lambda: F.relu(np.array(["a"])), TypeError, r"ReLU"),
    ("mul-str", lambda: x32() * "abc", TypeError, r"\*|[Mm]ul"),
    ("linear-str", lambda: F.linear(x32(), "W"), TypeError, r"Linear"),
    ("concat-none", lambda: F.concat(None), TypeError, r"concat.*xs"),
    ("stack-variable", lambda: F.stack(x32()), TypeError, r"stack.*xs"),
    ("expand-dims-str", lambda: F.expand_dims(x32(), "a"), TypeError, r"expand_dims.*axis"),
    ("squeeze-str", lambda: F.squeeze(x32(2, 1), "a"), TypeError, r"squeeze.*axis"),
    ("as-variable-str", lambda: graphcore.as_variable("abc"), TypeError, r"as_variable"),
    ("as-variable-str-array", lambda: graphcore.as_variable(np.array(["a"])), TypeError,
     r"Variable"),
    ("grad-var-str", lambda: setattr(x32(), "grad_var", "abc"), TypeError,
     r"Variable\.grad_var"),
    ("grad-var-shape", lambda: setattr(x32(), "grad_var", x32(3)), errors.ShapeError,
     r"Variable\.grad_var"),
    ("parameter-shape", lambda: graphcore.Parameter(None).initialize("ab"), TypeError,
     r"Parameter.*shape"),
    # any identifier is a key (Chainer's config takes user keys); anything else is not
    ("using-config-key", lambda: graphcore.using_config("no pe", 1).__enter__(), TypeError,
     r"using_config.*'no pe'"),
    ("using-config-bool", lambda: graphcore.using_config("train", "yes").__enter__(),
     TypeError, r"using_config.*train"),
    ("using-config-dtype", lambda: graphcore.using_config("dtype", "int32").__enter__(),
     TypeError, r"using_config.*dtype"),
    # --- initializers and optimizer hooks -------------------------------------------------
    ("normal-scale", lambda: graphcore.initializers.Normal("a"), TypeError, r"Normal.*scale"),
    ("glorot-negative", lambda: graphcore.initializers.GlorotUniform(-1.0), ValueError,
     r"GlorotUniform.*scale"),
    ("constant-none", lambda: graphcore.initializers.Constant(None), TypeError,
     r"Constant.*fill_value"),
    ("initializer-dtype", lambda: graphcore.initializers.Zero(dtype="U3"), TypeError,
     r"Zero.*dtype"),
    ("weight-decay-str", lambda: graphcore.optimizers.WeightDecay("a"), TypeError,
     r"WeightDecay.*rate"),
    ("clipping-negative", lambda: graphcore.optimizers.GradientClipping(-1.0), ValueError,
     r"GradientClipping.*threshold"),
    ("hard-clipping-order", lambda: graphcore.optimizers.GradientHardClipping(1.0, -1.0),
     ValueError, r"GradientHardClipping.*lower_bound"),
    # --- links ----------------------------------------------------------------------------
    ("linear-in-str", lambda: L.Linear("a", 3), TypeError, r"Linear.*in_size"),
    ("linear-out-str", lambda: L.Linear(3, "a"), TypeError, r"Linear.*out_size"),
    ("linear-out-float", lambda: L.Linear(3, 2.5), TypeError, r"Linear.*out_size"),
    ("linear-out-zero", lambda: L.Linear(3, 0), ValueError, r"Linear.*out_size"),
    ("linear-none-none", lambda: L.Linear(None), TypeError, r"Linear.*out_size"),
    ("linear-initialW", lambda: L.Linear(3, 2, initialW="abc"), TypeError, r"initializer"),
    ("linear-call-str", lambda: L.Linear(None, 2)("abc"), TypeError, r"Linear"),
    ("linear-call-none", lambda: L.Linear(3, 2)(None), TypeError, r"Linear"),
    ("embed-sizes", lambda: L.EmbedID("a", 3), TypeError, r"EmbedID.*in_size"),
    ("embed-call-float", lambda: L.EmbedID(3, 2)(np.ones(2, np.float32)), TypeError,
     r"EmbedID"),
    ("rnn-size", lambda: L.RNN(3, "a"), TypeError, r"RNN.*out_size"),
    ("lstm-size", lambda: L.LSTM(3, "a"), TypeError, r"LSTM.*out_size"),
    ("lstm-call-str", lambda: L.LSTM(3, 2)("abc"), TypeError, r"L"),
    ("batchnorm-size", lambda: L.BatchNormalization("a"), TypeError,
     r"BatchNormalization.*size"),
    ("batchnorm-decay", lambda: L.BatchNormalization(3, decay=2.0), ValueError,
     r"BatchNormalization.*decay"),
    ("batchnorm-call-str", lambda: L.BatchNormalization(axis=0)("abc"), TypeError,
     r"BatchNormalization"),
    ("chainlist-int", lambda: graphcore.ChainList(3), TypeError, r"ChainList"),
    ("sequential-int", lambda: graphcore.Sequential(3), TypeError, r"Sequential"),
    ("copyparams-str", lambda: L.Linear(3, 2).copyparams("a"), TypeError, r"copyparams"),
    ("copyparams-other-link", lambda: L.Linear(3, 2).copyparams(_Model()), ValueError,
     r"copyparams.*'/l1/W'"),
    # --- optimizers -----------------------------------------------------------------------
    ("sgd-lr-str", lambda: graphcore.optimizers.SGD(lr="a"), TypeError, r"SGD.*lr"),
    ("sgd-lr-negative", lambda: graphcore.optimizers.SGD(lr=-1.0), ValueError, r"SGD.*lr"),
    ("momentum-str", lambda: graphcore.optimizers.MomentumSGD(momentum="a"), TypeError,
     r"MomentumSGD.*momentum"),
    ("adam-beta1", lambda: graphcore.optimizers.Adam(beta1=1.5), ValueError, r"Adam.*beta1"),
    ("adam-amsgrad", lambda: graphcore.optimizers.Adam(amsgrad="yes"), TypeError,
     r"Adam.*amsgrad"),
    ("setup-str", lambda: graphcore.optimizers.SGD().setup("model"), TypeError,
     r"SGD\.setup.*Link"),
    ("update-not-callable", lambda: _setup(graphcore.optimizers.SGD()).update("loss"),
     TypeError, r"SGD\.update.*lossfun"),
    ("update-returns-str", lambda: _setup(graphcore.optimizers.SGD()).update(lambda: "loss"),
     TypeError, r"SGD\.update.*lossfun.*Variable"),
    ("add-hook-not-callable", lambda: _setup(graphcore.optimizers.SGD()).add_hook("clip"),
     TypeError, r"add_hook"),
    # --- serializers ----------------------------------------------------------------------
    ("save-npz-int-file", lambda: serializers.save_npz(3, _Model()), TypeError, r"save_npz"),
    ("save-npz-str-obj", lambda: serializers.save_npz("never.npz", "model"), TypeError,
     r"save_npz"),
    ("load-npz-none-file", lambda: serializers.load_npz(None, _Model()), TypeError,
     r"load_npz"),
    ("load-npz-str-obj", lambda: serializers.load_npz("missing.npz", "model"), TypeError,
     r"load_npz"),
    ("load-npz-path-int", lambda: serializers.load_npz("missing.npz", _Model(), path=3),
     TypeError, r"load_npz.*path"),
    # --- static mode ----------------------------------------------------------------------
    ("compile-none", lambda: graphcore.compile(None), TypeError, r"compile"),
    ("compile-int", lambda: graphcore.compile(3), TypeError, r"compile"),
    ("compile-passes-str", lambda: graphcore.compile(_Model(), passes="fuse"), TypeError,
     r"compile.*passes"),
    ("compile-cache-size", lambda: graphcore.compile(_Model(), cache_size=0), ValueError,
     r"compile.*cache_size"),
    ("compile-params", lambda: graphcore.compile(lambda x: x, params=3), TypeError,
     r"compile.*params"),
    ("compiled-call-str", lambda: graphcore.compile(_Model())("abc"), TypeError, r"_Model"),
    ("static-graph-int", lambda: graphcore.static_graph(3), TypeError, r"static_graph"),
    # --- gradient checks ------------------------------------------------------------------
    ("check-backward-func", lambda: gradient_check.check_backward("f", np.ones(2), None),
     TypeError, r"check_backward.*func"),
    ("check-backward-x-str", lambda: gradient_check.check_backward(F.relu, "abc", None),
     TypeError, r"check_backward.*x_data"),
    ("check-backward-eps", lambda: gradient_check.check_backward(F.relu, np.ones(2), None,
                                                                 eps=-1.0),
     ValueError, r"check_backward.*eps"),
    ("check-backward-y-grad-shape", lambda: gradient_check.check_backward(
        F.relu, np.ones(2), np.ones(3)), errors.ShapeError, r"check_backward.*y_grad"),
    ("check-double-func", lambda: gradient_check.check_double_backward(
        None, np.ones(2), None, np.ones(2)), TypeError, r"check_double_backward.*func"),
    # --- specs ----------------------------------------------------------------------------
    ("spec-run-str-input", lambda: gspec.run(seed_spec(), inputs={"x": "abc"}),
     TypeError, r"run.*'x'"),
    ("spec-run-missing-input", lambda: gspec.run(seed_spec(), inputs={}),
     ValueError, r"run.*'x'"),
    ("spec-run-unknown-input", lambda: gspec.run(
        seed_spec(), inputs={"x": np.ones((3, 4), np.float32), "z": np.ones(2)}),
     ValueError, r"run.*'z'"),
    ("spec-run-not-a-spec", lambda: gspec.run("specs/seed_static.yaml"), TypeError,
     r"run.*Spec"),
    ("spec-run-seed", lambda: gspec.run(seed_spec(), seed="a"), TypeError,
     r"run.*seed"),
    ("spec-build-model-str", lambda: gspec.build_model("abc"), TypeError,
     r"build_model.*spec"),
    ("spec-build-model-seed", lambda: gspec.build_model(seed_spec(), "a"), TypeError,
     r"build_model.*seed"),
    ("spec-run-spec-model", lambda: gspec.run_spec(
        seed_spec(), "model", {"x": np.ones((3, 4), np.float32)}), TypeError,
     r"run_spec.*model"),
    ("spec-loss-function-input", lambda: gspec.loss_function(
        seed_spec(), gspec.build_model(seed_spec()), {"x": "abc"}), TypeError,
     r"loss_function.*'x'"),
    ("spec-load-overrides-str", lambda: gspec.load_spec_file(
        str(SPECS / "seed_static.yaml"), overrides="params.hidden=3"), TypeError,
     r"load_spec_file.*overrides"),
    ("spec-load-max-elements", lambda: gspec.load_spec_text("graphtool: 1", max_elements="a"),
     TypeError, r"load_spec_text.*max_elements"),
    ("spec-load-none", lambda: gspec.load_spec_file(None), TypeError,
     r"load_spec_file"),
    ("spec-load-text-int", lambda: gspec.load_spec_text(3), TypeError,
     r"load_spec_text"),
    # --- registry -------------------------------------------------------------------------
    ("register-int", lambda: graphcore.register_op(3), TypeError, r"register_op"),
    ("get-op-int", lambda: graphcore.get_op(3), TypeError, r"get_op"),
]

# Calls that numpy or Python would accept and get wrong without a word.
SILENT = {"variable-str-array", "variable-object-array", "variable-datetime-array",
          "grad-setter-shape", "grad-setter-dtype", "cast-none", "sum-axis-bool",
          "mean-keepdims", "dropout-ratio-nan", "linear-out-float"}


@pytest.mark.parametrize("call, exc, names", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_wrong_call_raises_a_typed_error_naming_the_api(call, exc, names, tmp_path,
                                                        monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(exc) as info:
        call()
    message = str(info.value)
    assert isinstance(info.value, TypeError | ValueError), type(info.value)
    assert not isinstance(info.value, AttributeError | KeyError | IndexError)
    assert re.search(names, message), message
    assert "\n" not in message.strip() or isinstance(info.value, errors.SpecErrors), message
    assert not list(tmp_path.iterdir()), "a refused call wrote a file"


def test_the_table_is_broad():
    assert len(CASES) >= 90
    assert SILENT <= {c[0] for c in CASES}


# --- every declared op attribute, from the registry ---------------------------------------

def _types(attr: Attr) -> tuple[type, ...]:
    return attr.type if isinstance(attr.type, tuple) else (attr.type,)


def _valid(attr: Attr):
    if not attr.required and attr.default is not None:
        return attr.default
    if attr.choices:
        return attr.choices[0]
    types = _types(attr)
    if attr.low is not None:
        return int(attr.low) if int in types else float(attr.low)
    for t, value in ((int, 1), (float, 0.5), (bool, True), (tuple, (1,)), (list, [1]),
                     (str, "float32")):
        if t in types:
            return value
    return None


def _wrong(attr: Attr):
    types = _types(attr)
    if str not in types:
        return "wrong"
    return 1.5 if float not in types else {"a": 1}


def _attribute_cases():
    cases = []
    for name, op in all_ops().items():
        for key, attr in op.attributes.items():
            if object in _types(attr):
                continue  # takes anything (a numpy index)
            cases.append(pytest.param(op, key, id=f"{name}.{key}"))
    return cases


@pytest.mark.parametrize("op, key", _attribute_cases())
def test_each_declared_attribute_refuses_a_wrong_type_at_construction(op, key):
    kwargs = {k: _valid(a) for k, a in op.attributes.items() if a.required or k == key}
    kwargs[key] = _wrong(op.attributes[key])
    with pytest.raises(TypeError) as info:
        op(**kwargs)
    message = str(info.value)
    assert op.__name__ in message and f"'{key}'" in message, message
    assert "must be" in message and "got" in message, message


def test_attributes_are_checked_once_at_construction_not_per_call():
    """The check runs in the op's constructor; apply() (the hot path) checks no attribute."""
    from graphcore.ops.reduction import Sum

    op = Sum(axis=1)
    op.axis = "not an axis"  # bypass the constructor: apply must not look at it again
    with pytest.raises(Exception) as info:
        op.apply((np.ones((2, 3), np.float32),))
    assert "'axis' must be" not in str(info.value)


def test_a_user_op_gets_the_check_for_free():
    class Scaled(graphcore.FunctionNode):
        attributes = {"factor": Attr(float, 1.0, low=0.0), "mode": Attr(str, "a",
                                                                         choices=("a", "b"))}

        def __init__(self, factor=1.0, *, mode="a"):
            self.factor, self.mode = factor, mode

    assert Scaled(2).factor == 2 and Scaled(np.float32(0.5), mode="b").mode == "b"
    with pytest.raises(errors.ArgumentTypeError, match=r"Scaled: attribute 'factor' must be a "
                                                       r"number, got '2'"):
        Scaled("2")
    with pytest.raises(errors.ArgumentValueError, match=r"Scaled: attribute 'mode' must be one "
                                                        r"of 'a', 'b', got 'c'"):
        Scaled(mode="c")

    class Variadic(graphcore.FunctionNode):  # *args/**kwargs: the slower generic wrapper
        attributes = {"axis": Attr(int, 0)}

        def __init__(self, *args, **kwargs):
            self.axis = kwargs.get("axis", 0)

    with pytest.raises(errors.ArgumentTypeError, match=r"Variadic: attribute 'axis'"):
        Variadic(axis="a")

    class Renamed(Scaled):  # new declarations, inherited constructor: checked against them
        attributes = {"factor": Attr(float, 1.0, high=1.0), "mode": Scaled.attributes["mode"]}

    with pytest.raises(errors.ArgumentValueError, match=r"Renamed: attribute 'factor' must be "
                                                        r"at most 1.0"):
        Renamed(2.0)
    assert Scaled(2.0).factor == 2.0

    class Pool(graphcore.FunctionNode):  # a parameter named like a builtin the check uses
        attributes = {"type": Attr(str, "max", choices=("max", "mean"))}

        def __init__(self, type="max"):  # noqa: A002
            self.kind = type

    assert Pool("mean").kind == "mean"
    with pytest.raises(errors.ArgumentValueError, match=r"Pool: attribute 'type' must be one"):
        Pool("min")


def test_the_spec_validator_reads_the_same_declarations():
    """A spec gets the element and dtype checks at load (located, exit 65), not at run time."""
    text = """graphtool: 1
inputs:
  x: {random: normal, shape: [2, 3]}
graph:
  - {op: reshape, shape: [3, a]}
  - {op: cast, dtype: str}
  - {op: cast, dtype: float99}
outputs: [_]
"""
    with pytest.raises(errors.SpecErrors) as info:
        gspec.load_spec_text(text)
    lines = [e.headline() for e in info.value.errors]
    assert lines == [
        "<spec>:5:26: error: attribute 'shape' of 'reshape' must be a list of integers, got "
        "[3, 'a']",
        "<spec>:6:23: error: attribute 'dtype' of 'cast' must be a bool, integer or "
        "floating-point dtype, got 'str'",
        "<spec>:7:23: error: attribute 'dtype' of 'cast' must be a numpy dtype or its name, "
        "got 'float99'"]
