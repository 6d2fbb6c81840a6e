"""``BatchNormalization``: normalize by batch statistics while training, by running averages
otherwise (``graphcore.config.train``); ``BatchRenormalization``, its variant corrected
towards the running averages.
"""

from __future__ import annotations

import numpy as np

from graphcore import initializers
from graphcore.attributes import Attr, check_arguments
from graphcore.config import config, get_dtype
from graphcore.errors import (
    ArgumentTypeError,
    ArgumentValueError,
    MissingArgumentError,
    ShapeError,
)
from graphcore.links.link import Link
from graphcore.ops.normalization_batch import (
    batch_normalization,
    batch_renormalization,
    fixed_batch_normalization,
)
from graphcore.variable import Parameter, Variable

_ARGS = {"decay": Attr(float, low=0.0, high=1.0), "eps": Attr(float, low=0.0),
         "use_gamma": Attr(bool), "use_beta": Attr(bool)}


def _size_argument(owner: str, size) -> tuple[int, ...] | None:
    if size is None:
        return None
    sizes = (size,) if isinstance(size, int | np.integer) else size
    if not isinstance(sizes, tuple | list) or not all(
            isinstance(n, int | np.integer) and not isinstance(n, bool) and n >= 1
            for n in sizes):
        raise ArgumentTypeError(f"{owner}: size must be a positive int, a tuple of them or None, "
                                f"got {size!r}")
    return tuple(int(n) for n in sizes)


def _parse_forward_kwargs(owner: str, kwargs: dict) -> bool:
    """``finetune`` from ``forward``'s keywords; Chainer's removed ``test=`` is refused."""
    if "test" in kwargs:
        raise ArgumentValueError(f"{owner}: the test argument is not supported anymore; use "
                                 "using_config('train', False)")
    finetune = kwargs.pop("finetune", False)
    if kwargs:
        raise ArgumentTypeError(f"{owner}: got unexpected keyword argument(s) "
                                f"{', '.join(sorted(kwargs))}")
    return finetune


class BatchNormalization(Link):
    """Chainer's ``L.BatchNormalization``: batch normalization over ``axis`` (default: axis 0
    and the axes after the channel axes, so ``size=C`` normalizes ``(N, C, ...)`` per channel).

    Parameters ``gamma`` (scale, starts at ``initial_gamma``, 1) and ``beta`` (shift,
    ``initial_beta``, 0) of shape ``size``; persistent values ``avg_mean`` and ``avg_var``
    (``initial_avg_mean``/``initial_avg_var``, 0 and 1) and ``N`` (batches seen). Each training
    call moves the averages towards the batch's mean and *unbiased* variance::

        avg_mean = decay * avg_mean + (1 - decay) * mean
        avg_var  = decay * avg_var  + (1 - decay) * var * m / (m - 1)   # m values per statistic

    With ``config.train`` False the layer uses the averages instead (``finetune=True`` keeps a
    cumulative average instead of an exponential one). ``size=None`` takes the size from the
    first input's axes outside ``axis``, so one of them is required. ``dtype=mixed16`` keeps
    parameters and averages in float32 for float16 inputs.
    """

    gamma = None
    beta = None
    _size_from_axis_1 = False  # ChannelBatchNormalization's lazy size

    def __init__(self, size=None, decay: float = 0.9, eps: float = 2e-5, dtype=None,
                 use_gamma: bool = True, use_beta: bool = True, initial_gamma=None,
                 initial_beta=None, axis=None, initial_avg_mean=None,
                 initial_avg_var=None) -> None:
        super().__init__()
        owner = type(self).__name__
        size = _size_argument(owner, size)
        if size is None and axis is None and not self._size_from_axis_1:
            raise MissingArgumentError(f"{owner}: size or axis is required")
        check_arguments(owner, _ARGS, decay=float(decay) if isinstance(decay, int) else decay,
                        eps=float(eps) if isinstance(eps, int) else eps,
                        use_gamma=use_gamma, use_beta=use_beta)
        self.decay = decay
        self.eps = eps
        self.axis = (int(axis),) if isinstance(axis, int | np.integer) else axis
        self._highprec_dtype = get_dtype(dtype, map_mixed16=np.float32)
        self._initial_avg_mean = initial_avg_mean
        self._initial_avg_var = initial_avg_var
        self.add_persistent("avg_mean", None)
        self.add_persistent("avg_var", None)
        self.add_persistent("N", 0)
        with self.init_scope():
            if use_gamma:
                self.gamma = self._param(1, initial_gamma)
            if use_beta:
                self.beta = self._param(0, initial_beta)
        if size is not None:
            self._initialize(size)

    def _initializer(self, initial, default):
        """An initializer of the link's dtype from Chainer's spellings: None (``default``), a
        number or an array (a constant), or an initializer."""
        if initial is None:
            initial = default
        if isinstance(initial, np.ndarray) or (np.isscalar(initial)
                                               and not isinstance(initial, str | bytes)):
            return initializers.Constant(initial, self._highprec_dtype)
        if not callable(initial):
            raise ArgumentTypeError(f"{type(self).__name__}: an initial value must be a number, "
                                    f"an array or an initializer, got {type(initial).__name__}")
        initial.dtype = self._highprec_dtype
        return initial

    def _param(self, default, initial) -> Parameter:
        return Parameter(self._initializer(initial, default))

    def _initial_array(self, initial, default, shape) -> np.ndarray:
        return initializers.generate_array(self._initializer(initial, default), shape)

    def _initialize(self, shape: tuple[int, ...]) -> None:
        self.avg_mean = self._initial_array(self._initial_avg_mean, 0, shape)
        self.avg_var = self._initial_array(self._initial_avg_var, 1, shape)
        self._initial_avg_mean = self._initial_avg_var = None
        for p in (self.gamma, self.beta):
            if p is not None and p.array is None:
                p.initialize(shape)

    def _scale_and_shift(self, x):
        if self.avg_mean is None:
            if not isinstance(x, Variable | np.ndarray):
                raise ArgumentTypeError(f"{type(self).__name__}: input must be a Variable or a "
                                        f"numpy array, got {type(x).__name__}")
            self._initialize(self._lazy_shape(x))
        shape = self.avg_mean.shape
        gamma = self.gamma if self.gamma is not None else np.ones(shape, self._highprec_dtype)
        beta = self.beta if self.beta is not None else np.zeros(shape, self._highprec_dtype)
        return gamma, beta

    def _lazy_shape(self, x) -> tuple[int, ...]:
        axis = tuple(a % x.ndim for a in self.axis) if x.ndim else self.axis
        return tuple(n for i, n in enumerate(x.shape) if i not in axis)

    def _decay(self, finetune: bool) -> float:
        if finetune:
            self.N += 1
            return 1.0 - 1.0 / self.N
        return self.decay

    def forward(self, x, **kwargs):
        finetune = _parse_forward_kwargs(type(self).__name__, kwargs)
        gamma, beta = self._scale_and_shift(x)
        if not config.train:
            return fixed_batch_normalization(x, gamma, beta, self.avg_mean, self.avg_var,
                                             self.eps, axis=self.axis)
        decay = self._decay(finetune)
        running_mean, running_var = self.avg_mean, self.avg_var
        if config.in_recomputing:  # a recomputed forward must not count the batch twice
            if finetune:
                self.N -= 1
            running_mean = running_var = None
        return batch_normalization(x, gamma, beta, eps=self.eps, running_mean=running_mean,
                                   running_var=running_var, decay=decay, axis=self.axis)

    def start_finetuning(self) -> None:
        """Reset the batch count before a ``finetune=True`` pass over the data."""
        self.N = 0


class ChannelBatchNormalization(BatchNormalization):
    """``BatchNormalization`` whose size is taken from the first input's axis 1, the
    statistics being over every other axis, whatever the input's rank (what the spec layer
    ``batch_normalization`` without ``size`` builds; Chainer's link needs ``size`` or
    ``axis``)."""

    _size_from_axis_1 = True

    def __init__(self, decay: float = 0.9, eps: float = 2e-5, dtype=None) -> None:
        super().__init__(None, decay, eps, dtype)

    def _lazy_shape(self, x) -> tuple[int, ...]:
        if x.ndim < 2:
            raise ShapeError(f"{type(self).__name__}: input must have a channel axis "
                             f"(batch, channels, ...), got shape {x.shape}")
        return (x.shape[1],)


class BatchRenormalization(BatchNormalization):
    """Chainer's ``L.BatchRenormalization(size, rmax=1, dmax=0, decay=0.9, eps=2e-5, ...)``:
    while training, batch renormalization with ``r`` clipped to ``[1/rmax, rmax]`` and ``d``
    to ``[-dmax, dmax]`` (``update_rmax_dmax`` may change them as training goes on); otherwise
    normalization by the running averages. The statistics are over axis 0 and the axes after
    the channel axes."""

    def __init__(self, size, rmax: float = 1, dmax: float = 0, decay: float = 0.9,
                 eps: float = 2e-5, dtype=None, use_gamma: bool = True, use_beta: bool = True,
                 initial_gamma=None, initial_beta=None, initial_avg_mean=None,
                 initial_avg_var=None) -> None:
        super().__init__(size, decay, eps, dtype, use_gamma, use_beta, initial_gamma,
                         initial_beta, initial_avg_mean=initial_avg_mean,
                         initial_avg_var=initial_avg_var)
        self.rmax = rmax
        self.dmax = dmax

    def forward(self, x, finetune: bool = False):
        gamma, beta = self._scale_and_shift(x)
        if not config.train:
            return fixed_batch_normalization(x, gamma, beta, self.avg_mean, self.avg_var,
                                             self.eps)
        decay = self._decay(finetune)
        return batch_renormalization(x, gamma, beta, self.rmax, self.dmax, self.eps,
                                     self.avg_mean, self.avg_var, decay,
                                     update_statistics=True)
