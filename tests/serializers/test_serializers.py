"""save_npz / load_npz: round trips, lazy parameters, strict key checks, no pickle."""

import io
import os

import numpy as np
import pytest

import graphcore
import graphcore.functions as F
import graphcore.links as L
from graphcore import optimizers
from graphcore.errors import SerializationError
from graphcore.serializers import load_npz, save_npz


class Net(graphcore.Chain):
    def __init__(self, in_size=3):
        super().__init__()
        with self.init_scope():
            self.l1 = L.Linear(in_size, 4)
            self.bn = L.BatchNormalization(4)
            self.l2 = L.Linear(4, 2)

    def forward(self, x):
        return self.l2(F.relu(self.bn(self.l1(x))))


X = np.random.default_rng(0).normal(size=(5, 3)).astype(np.float32)


def test_keys_are_parameter_paths_and_persistent_values(tmp_path):
    path = tmp_path / "net.npz"
    save_npz(path, Net())
    with np.load(path) as npz:
        assert sorted(npz.files) == sorted([
            "l1/W", "l1/b", "bn/gamma", "bn/beta", "bn/avg_mean", "bn/avg_var", "bn/N",
            "l2/W", "l2/b"])


@pytest.mark.parametrize("compression", [True, False])
def test_round_trip_restores_outputs_in_place(tmp_path, compression):
    src = Net()
    src(X)  # moves the batch norm averages away from their initial values
    path = tmp_path / "net"  # no '.npz': the name is kept as given
    save_npz(str(path), src, compression=compression)
    assert os.listdir(tmp_path) == ["net"]
    dst = Net()
    held = dst.l1.W.array
    load_npz(path, dst)
    assert dst.l1.W.array is held  # copied in place: an optimizer's references stay valid
    np.testing.assert_array_equal(dst.bn.avg_mean, src.bn.avg_mean)
    with graphcore.using_config("train", False):
        np.testing.assert_array_equal(dst(X).array, src(X).array)


def test_file_objects_work_too():
    buffer = io.BytesIO()
    src = L.Linear(2, 3)
    save_npz(buffer, src)
    buffer.seek(0)
    dst = L.Linear(2, 3)
    load_npz(buffer, dst)
    np.testing.assert_array_equal(dst.W.array, src.W.array)


def test_lazy_parameters_are_initialized_from_the_file(tmp_path):
    src = L.Sequential(L.Linear(None, 4), F.relu, L.Linear(None, 2))
    src(X)
    save_npz(tmp_path / "m.npz", src)
    dst = L.Sequential(L.Linear(None, 4), F.relu, L.Linear(None, 2))
    load_npz(tmp_path / "m.npz", dst)
    assert dst[0].W.shape == (4, 3)
    np.testing.assert_array_equal(dst(X).array, src(X).array)


def test_uninitialized_lazy_parameters_are_left_out_and_stay_lazy(tmp_path):
    """As in Chainer (which saves None for them), a model saved before its lazy layers saw an
    input loads back with those layers still lazy; no pickle is involved."""
    src = L.Sequential(L.Linear(None, 4), F.relu, L.Linear(4, 2))
    save_npz(tmp_path / "m.npz", src)
    with np.load(tmp_path / "m.npz", allow_pickle=False) as npz:
        assert sorted(npz.files) == ["0/b", "1/W", "1/b"]  # functions are not numbered
    dst = L.Sequential(L.Linear(None, 4), F.relu, L.Linear(4, 2))
    load_npz(tmp_path / "m.npz", dst)  # strict: every initialized parameter was in the file
    assert dst[0].W.array is None
    np.testing.assert_array_equal(dst[2].W.array, src[2].W.array)
    assert dst(X).shape == (5, 2) and dst[0].W.shape == (4, 3)  # initializes on first use


def test_an_initialized_parameter_missing_from_the_file_is_still_an_error(tmp_path):
    save_npz(tmp_path / "m.npz", L.Linear(None, 2))
    with pytest.raises(SerializationError, match="lacks 1 key"):
        load_npz(tmp_path / "m.npz", L.Linear(3, 2))


def test_shape_mismatch_names_key_and_both_shapes(tmp_path):
    save_npz(tmp_path / "m.npz", Net(in_size=3))
    with pytest.raises(SerializationError, match=r"l1/W: the model expects shape \(4, 5\).*"
                                                 r"file holds shape \(4, 3\)"):
        load_npz(tmp_path / "m.npz", Net(in_size=5))


def test_dtype_mismatch_is_an_error(tmp_path):
    np.savez(tmp_path / "m.npz", W=np.zeros((3, 2), np.float64), b=np.zeros(3, np.float32))
    with pytest.raises(SerializationError, match="W: .*float32.*float64"):
        load_npz(tmp_path / "m.npz", L.Linear(2, 3))


def test_strict_rejects_missing_and_unexpected_keys(tmp_path):
    save_npz(tmp_path / "nobias.npz", L.Linear(2, 3, nobias=True))
    with pytest.raises(SerializationError, match="the file lacks 1 key.*: b"):
        load_npz(tmp_path / "nobias.npz", L.Linear(2, 3))
    save_npz(tmp_path / "linear.npz", L.Linear(2, 3))
    with pytest.raises(SerializationError, match="the model lacks: b"):
        load_npz(tmp_path / "linear.npz", L.Linear(2, 3, nobias=True), exact=True)
    # Chainer's strict: keys beyond the model's are ignored
    load_npz(tmp_path / "linear.npz", L.Linear(2, 3, nobias=True))
    load_npz(tmp_path / "linear.npz", L.Linear(2, 3, nobias=True), strict=False, exact=True)
    load_npz(tmp_path / "nobias.npz", L.Linear(2, 3), strict=False)


def test_path_prefix_selects_a_sub_model(tmp_path):
    net = Net()
    save_npz(tmp_path / "net.npz", net)
    l2 = L.Linear(4, 2)
    load_npz(tmp_path / "net.npz", l2, path="l2/")
    np.testing.assert_array_equal(l2.W.array, net.l2.W.array)


def test_pickled_arrays_are_refused(tmp_path):
    np.savez(tmp_path / "evil.npz", W=np.array([{"a": 1}], dtype=object),
             b=np.zeros(3, np.float32))
    with pytest.raises(SerializationError, match="'W' holds Python objects"):
        load_npz(tmp_path / "evil.npz", L.Linear(2, 3))


def test_optimizer_state_round_trip(tmp_path):
    model = Net()
    opt = optimizers.Adam(alpha=0.01).setup(model)
    for _ in range(3):
        opt.update(lambda: F.sum(F.square(model(X))))
    save_npz(tmp_path / "model.npz", model)
    save_npz(tmp_path / "opt.npz", opt)
    with np.load(tmp_path / "opt.npz") as npz:
        assert {"t", "epoch", "l1/W/t", "l1/W/m", "l1/W/v"} <= set(npz.files)

    model2 = Net()
    opt2 = optimizers.Adam(alpha=0.01).setup(model2)
    load_npz(tmp_path / "model.npz", model2)
    load_npz(tmp_path / "opt.npz", opt2)
    assert opt2.t == 3 and model2.l1.W.update_rule.t == 3
    opt.update(lambda: F.sum(F.square(model(X))))
    opt2.update(lambda: F.sum(F.square(model2(X))))
    np.testing.assert_allclose(model2.l1.W.array, model.l1.W.array, rtol=1e-6)


def test_write_is_atomic_when_saving_fails(tmp_path, monkeypatch):
    path = tmp_path / "m.npz"
    save_npz(path, L.Linear(2, 3))
    before = path.read_bytes()

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez_compressed", broken)
    with pytest.raises(OSError, match="disk full"):
        save_npz(path, L.Linear(2, 3))
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["m.npz"]


def test_saved_file_gets_ordinary_permissions(tmp_path):
    umask = os.umask(0o022)
    try:
        save_npz(tmp_path / "m.npz", L.Linear(2, 3))
    finally:
        os.umask(umask)
    assert (tmp_path / "m.npz").stat().st_mode & 0o777 == 0o644


def test_unreadable_files(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_npz(tmp_path / "missing.npz", L.Linear(2, 3))
    (tmp_path / "junk.npz").write_bytes(b"not an archive")
    with pytest.raises(SerializationError, match="junk.npz is not an .npz file"):
        load_npz(tmp_path / "junk.npz", L.Linear(2, 3))
