"""Chainer's serializer classes: DictionarySerializer, NpzDeserializer, serialize(), and the
``serialize(serializer)`` protocol of Links and Optimizers, in save_npz's layout."""

import numpy as np
import pytest

import graphcore
import graphcore.links as L
from graphcore import optimizers
from graphcore.errors import SerializationError
from graphcore.serializers import (
    DictionarySerializer,
    NpzDeserializer,
    load_npz,
    save_npz,
    serialize,
)


class Net(graphcore.Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.l1 = L.Linear(3, 4)
            self.stack = graphcore.ChainList(L.Linear(4, 2), L.Linear(2, 2))
            self.scale = graphcore.Parameter(np.ones((), np.float32))


def test_a_links_protocol_writes_save_npzs_keys(tmp_path):
    net = Net()
    saved = serialize(net)
    save_npz(tmp_path / "net.npz", net)
    with np.load(tmp_path / "net.npz") as f:
        assert set(f.files) == set(saved)
        for key in f.files:
            np.testing.assert_array_equal(f[key], saved[key])
    assert {"l1/W", "l1/b", "stack/0/W", "stack/1/b", "scale"} <= set(saved)


def test_dictionary_serializer_strips_slashes_and_keeps_none_in_memory():
    s = DictionarySerializer()
    child = s["/a/"]
    assert child.path == "a/"
    value = np.arange(3)
    assert child("/w", value) is value
    assert s("n", None) is None
    assert s.target["a/w"] is not None and s.target["n"][()] is None


def test_npz_deserializer_follows_chainers_rules(tmp_path):
    np.savez(tmp_path / "a.npz", y=np.arange(6, dtype=np.float64).reshape(2, 3),
             z=np.asarray(10), f=np.float32(1.5))
    with np.load(tmp_path / "a.npz") as f:
        d = NpzDeserializer(f)
        half = np.empty((2, 3), np.float16)
        assert d("/y", half) is half
        np.testing.assert_array_equal(half, np.arange(6).reshape(2, 3))
        np.testing.assert_array_equal(d("y", None), np.arange(6).reshape(2, 3))
        assert d("z", 5) == 10
        with pytest.raises(TypeError, match="cannot safely load a float32 value into a int"):
            d("f", 5)
        with pytest.raises(KeyError, match="nope"):
            d("nope", 1)
        assert NpzDeserializer(f, strict=False)("nope", 1) == 1
        with pytest.raises(SerializationError, match=r"y: expected shape \(3,\)"):
            d("y", np.empty(3))
        with pytest.raises(SerializationError, match="y: expected shape .*int32"):
            d("y", np.empty((2, 3), np.int32))  # float into an integer array: not same-kind
        kept = np.zeros((2, 3))
        for ignore in ("y", ["y"], lambda key: key == "y", [lambda key: key.startswith("y")]):
            assert NpzDeserializer(f, ignore_names=ignore)("y", kept) is kept
        assert not kept.any()


def test_load_npz_ignore_names_and_chainers_strict(tmp_path):
    source = Net()
    save_npz(tmp_path / "net.npz", source)
    target = Net()
    before = target.l1.W.array.copy()
    load_npz(tmp_path / "net.npz", target, ignore_names=["l1/W"])
    np.testing.assert_array_equal(target.l1.W.array, before)
    np.testing.assert_array_equal(target.l1.b.array, source.l1.b.array)
    np.testing.assert_array_equal(target.stack[1].W.array, source.stack[1].W.array)
    part = L.Linear(3, 4)
    load_npz(tmp_path / "net.npz", part, path="l1/")  # the file's other keys are not part's
    np.testing.assert_array_equal(part.W.array, source.l1.W.array)
    load_npz(tmp_path / "net.npz", graphcore.Chain(l1=L.Linear(3, 4)))
    with pytest.raises(SerializationError, match="the model lacks: scale, stack/0/W"):
        load_npz(tmp_path / "net.npz", graphcore.Chain(l1=L.Linear(3, 4)), exact=True)


def test_a_lazy_parameter_takes_the_stored_shape_through_the_protocol(tmp_path):
    save_npz(tmp_path / "l.npz", L.Linear(3, 2))
    lazy = L.Linear(None, 2)
    with np.load(tmp_path / "l.npz") as f:
        NpzDeserializer(f).load(lazy)
    assert lazy.W.shape == (2, 3)


def test_an_optimizers_protocol_state_resumes_exactly(tmp_path):
    def step(model, opt, scale):
        model.cleargrads()
        for p in model.params():
            p.grad = np.full_like(p.array, scale)
        opt.update()

    model = Net()
    opt = optimizers.Adam(alpha=0.01).setup(model)
    step(model, opt, 1.0)
    saved_opt, saved_model = serialize(opt), serialize(model)
    assert {"t", "epoch", "l1/W/t", "l1/W/m", "l1/W/v", "stack/1/b/v"} <= set(saved_opt)
    np.savez(tmp_path / "opt.npz", **saved_opt)
    np.savez(tmp_path / "model.npz", **saved_model)
    again = Net()
    resumed = optimizers.Adam(alpha=0.01).setup(again)
    with np.load(tmp_path / "model.npz") as f:
        NpzDeserializer(f).load(again)
    with np.load(tmp_path / "opt.npz") as f:
        NpzDeserializer(f).load(resumed)
    assert resumed.t == 1 and again.l1.W.update_rule.t == 1
    step(model, opt, -0.5)
    step(again, resumed, -0.5)
    for a, b in zip(model.params(), again.params(), strict=True):
        np.testing.assert_array_equal(a.array, b.array)


def test_save_npz_writes_no_pickles(tmp_path):
    save_npz(tmp_path / "d.npz", {"a": np.ones(2), "lazy": None})
    with np.load(tmp_path / "d.npz", allow_pickle=False) as f:
        assert f.files == ["a"]
    with pytest.raises(SerializationError, match="o: .*pickling"):
        save_npz(tmp_path / "o.npz", {"o": np.array([{}], dtype=object)})
