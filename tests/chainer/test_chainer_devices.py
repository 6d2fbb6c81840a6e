"""Chainer 7's device API over graphcore: '@numpy' everywhere; a GPU, iDeep or ChainerX is
one clear error, never a silent fall-back to the CPU."""

from __future__ import annotations

import numpy as np
import pytest

from graphcore import backend, chainer_compat


@pytest.fixture
def chainer():
    chainer_compat.install()
    import chainer

    yield chainer
    chainer_compat.uninstall()


@pytest.mark.parametrize("spec", ["@numpy", np, -1, "-1", backend.CpuDevice()])
def test_the_cpu_specifiers_give_the_cpu_device(spec):
    device = backend.get_device(spec)
    assert device == backend.CpuDevice() and device.xp is np and str(device) == "@numpy"
    array = np.ones((2, 3), np.float32)
    assert device.send(array) is array
    assert device.send([array, (array,)])[1][0] is array


@pytest.mark.parametrize(("spec", "message"), [
    ("@cupy:0", "@cupy:0: CuPy (a GPU) is not available"),
    (0, "@cupy:0: CuPy (a GPU) is not available"),
    ("@intel64", "@intel64: iDeep is not available"),
    ("native:0", "native:0: ChainerX is not available"),
])
def test_other_devices_are_one_clear_error(spec, message):
    with pytest.raises(backend.DeviceUnavailable) as caught:
        backend.get_device(spec)
    text = str(caught.value)
    assert text.startswith(message) and "\n" not in text and "'@numpy'" in text


@pytest.mark.parametrize("spec", ["@cuda", "@numpy:0", 1.5, None])
def test_a_malformed_specifier_is_refused(spec):
    with pytest.raises((ValueError, TypeError)):
        backend.get_device(spec)


def test_naming_a_gpu_device_class_is_fine_making_one_is_not():
    assert not isinstance(backend.CpuDevice(), backend.GpuDevice)
    with pytest.raises(backend.DeviceUnavailable, match="CuPy"):
        backend.GpuDevice.from_device_id(1)


def test_chainer_names_the_device_api_and_chainerx_says_it_is_absent(chainer):
    import chainerx
    from chainer import backend as chainer_backend

    assert chainer_backend.get_device("@numpy") == chainer.get_device("@numpy")
    assert chainer_backend.get_array_module(chainer.Variable(np.zeros(2))) is np
    with chainer.using_device("@numpy") as device:
        assert device.xp is np
    assert chainerx.is_available() is False
    assert not isinstance(np.zeros(2), chainerx.ndarray)
    with pytest.raises(RuntimeError, match="ChainerX is not available"):
        chainerx.get_device("native:0")


def test_chainer_utils_parse_kwargs_names_what_it_does_not_take(chainer):
    from chainer.utils import argument

    def f(**kwargs):
        return argument.parse_kwargs(kwargs, ("a", 1), ("b", 2), old="use a instead")

    assert f(b=5) == (1, 5)
    with pytest.raises(ValueError, match="use a instead"):
        f(old=3)
    with pytest.raises(TypeError, match=r"f\(\) got unexpected keyword argument\(s\) 'c'"):
        f(c=3)
    assert chainer.utils.force_array(np.float32(2)).shape == ()
    assert chainer.utils.size_of_shape(()) == 1
