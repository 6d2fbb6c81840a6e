"""``Link`` (owns parameters), ``Chain`` (owns named child links), ``Sequential``.

Parameters and children are named by assignment inside ``with self.init_scope():``, as in
Chainer, and those names (``/l1/W``) are used everywhere: optimizers, saved files, graph labels.
Chainer's device API is here over ``graphcore.backend``: ``device``, ``xp``, ``to_device`` and
``to_cpu`` for the CPU; ``to_gpu``, ``to_intel64`` and ``to_chx`` raise ``DeviceUnavailable``.
"""

from __future__ import annotations

import contextlib
import copy as copying
import operator
from collections.abc import Callable, Iterator

import numpy as np

from graphcore import backend, initializers
from graphcore.variable import Parameter

# Bumped whenever any link gains, loses or replaces a parameter or child, so the flat
# parameter lists links cache (a training loop asks for them every step) stay true.
_structure = [0]


def _is_shape(value: object) -> bool:
    """Whether ``value`` is a shape (None, an int >= 0 or a sequence of them), not a
    ``(shape, dtype)`` pair."""
    if value is None:
        return True
    if isinstance(value, list | tuple):
        return all(_is_shape(v) for v in value)
    try:
        return operator.index(value) >= 0
    except TypeError:
        return False


class Link:
    """A layer: a set of named parameters (``Parameter``) and, in subclasses, children."""

    def __init__(self, **params: object) -> None:
        object.__setattr__(self, "_params", [])
        object.__setattr__(self, "_persistent", [])
        object.__setattr__(self, "_within_init_scope", False)
        object.__setattr__(self, "name", None)
        # Chainer's form: ``Link(W=(3, 4))`` or ``Link(W=((3, 4), 'd'))``, NaN-filled
        for name, value in params.items():
            shape, dtype = (value, np.float32) if _is_shape(value) else value
            self.add_param(name, shape, dtype=dtype)

    # Chainer's array module (numpy or cupy); graphcore computes with numpy only.
    xp = np

    @property
    def device(self) -> backend.Device:
        """The device the parameters are on: the CPU."""
        return backend.CpuDevice()

    def to_device(self, device: object) -> Link:
        """Move every parameter and persistent array to ``device`` (a Chainer specifier; only
        the CPU exists, another raises ``DeviceUnavailable``). Returns this link."""
        target = backend.get_device(device)
        for link in self.links():
            for name in link._params:
                getattr(link, name).to_device(target)
            for name in link._persistent:
                value = getattr(link, name)
                if isinstance(value, np.ndarray | np.generic):
                    object.__setattr__(link, name, target.send(value))
        return self

    def to_cpu(self) -> Link:
        return self.to_device("@numpy")

    def to_gpu(self, device: object = None) -> Link:
        """Raises ``DeviceUnavailable``: graphcore computes with numpy only."""
        backend.GpuDevice.from_device_id(0 if device is None else device)
        return self

    def to_intel64(self) -> Link:
        """Raises ``DeviceUnavailable``: graphcore computes with numpy only."""
        backend.get_device("@intel64")
        return self

    def to_chx(self) -> Link:
        """Raises ``DeviceUnavailable``: ChainerX is not available."""
        backend.get_device("native:0")
        return self

    def from_chx(self) -> Link:
        """Nothing is on ChainerX: the link stays as it is."""
        return self

    @contextlib.contextmanager
    def init_scope(self) -> Iterator[None]:
        """Inside this block, assigning a Parameter (or a Link, in a Chain) registers it."""
        old = self._within_init_scope
        object.__setattr__(self, "_within_init_scope", True)
        try:
            yield
        finally:
            object.__setattr__(self, "_within_init_scope", old)

    def __setattr__(self, name: str, value: object) -> None:
        if self._within_init_scope and isinstance(value, Parameter):
            value.name = name
            if name not in self._params:
                self._params.append(name)
        if isinstance(value, Parameter | Link) or name in self._params:
            _structure[0] += 1
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        _structure[0] += 1
        if name in self._params:
            self._params.remove(name)
        if name in self._persistent:
            self._persistent.remove(name)
        object.__delattr__(self, name)

    def add_param(self, name: str, shape=None, dtype=np.float32, initializer=None) -> None:
        """Register a Parameter ``name`` of ``shape`` (uninitialized without one), filled by
        ``initializer`` or, without one, with NaN of ``dtype`` (Chainer's default: a
        parameter nobody initialized shows as NaN)."""
        if name in self.__dict__:
            raise AttributeError(f"cannot register a new parameter {name}: attribute exists")
        if initializer is None:
            initializer = initializers.NaN(dtype)
        with self.init_scope():
            setattr(self, name, Parameter(initializer, shape))

    def add_persistent(self, name: str, value: object) -> None:
        """Register a non-trained value (running averages) that serializers save."""
        if name not in self._persistent:
            self._persistent.append(name)
        object.__setattr__(self, name, value)

    def register_persistent(self, name: str) -> None:
        """Make the attribute ``name`` (already set) a persistent value (Chainer's)."""
        if name not in self.__dict__:
            raise AttributeError(f"{type(self).__name__}.register_persistent: the link has no "
                                 f"attribute {name!r} to register")
        if name in self._params:
            raise ValueError(f"{type(self).__name__}.register_persistent: {name!r} is a "
                             f"parameter, not a persistent value")
        if name not in self._persistent:
            self._persistent.append(name)

    # --- traversal --------------------------------------------------------------------------
    def params(self, include_uninit: bool = True) -> Iterator[Parameter]:
        for _, p in self.namedparams(include_uninit):
            yield p

    def namedparams(self, include_uninit: bool = True) -> Iterator[tuple[str, Parameter]]:
        """``('/l1/W', param)`` pairs in registration order."""
        for name in self._params:
            p = getattr(self, name)
            if include_uninit or p.array is not None:
                yield "/" + name, p

    def links(self, skipself: bool = False) -> Iterator[Link]:
        for _, link in self.namedlinks(skipself):
            yield link

    def namedlinks(self, skipself: bool = False) -> Iterator[tuple[str, Link]]:
        if not skipself:
            yield "/", self

    def children(self) -> Iterator[Link]:
        return iter(())

    def namedpersistent(self) -> Iterator[tuple[str, object]]:
        for name in self._persistent:
            yield "/" + name, getattr(self, name)

    def _flat_params(self) -> list[Parameter]:
        cache = self.__dict__.get("_param_cache")
        if cache is None or cache[0] != _structure[0]:
            cache = (_structure[0], list(self.params()))
            object.__setattr__(self, "_param_cache", cache)
        return cache[1]

    def cleargrads(self) -> None:
        """Forget every parameter's gradient (call before each backward in a training loop)."""
        for p in self._flat_params():
            p._grad = None

    def zerograds(self) -> None:
        for p in self.params():
            p.zerograd()

    def count_params(self) -> int:
        return sum(p.size for p in self.params() if p.array is not None)

    def copyparams(self, other: Link) -> None:
        """Copy ``other``'s parameter values into this link's arrays, in place."""
        if not isinstance(other, Link):
            raise TypeError(f"{type(self).__name__}.copyparams takes a Link, got "
                            f"{type(other).__name__}")
        mine = dict(self.namedparams())
        for name, p in other.namedparams():
            target = mine.get(name)
            if target is None:
                raise ValueError(f"{type(self).__name__}.copyparams: this link has no "
                                 f"parameter {name!r} (its parameters: {', '.join(mine)})")
            if target.array is None:
                target.array = p.array.copy()
            else:
                target.array[...] = p.array

    def copy(self, mode: str = "share") -> Link:
        """A copy of this link and its children, in one of Chainer's three modes.

        ``share``: new link and parameter objects over the same arrays, so an update through
        one is seen by the other, while gradients stay separate. ``copy``: a deep copy that
        starts equal and then goes its own way. ``init``: a deep copy whose initialized
        parameters are drawn again from their initializers.
        """
        if mode == "share":
            return self._share()
        if mode not in ("copy", "init"):
            raise ValueError(f"Link.copy: mode must be 'share', 'copy' or 'init', got {mode!r}")
        ret = copying.deepcopy(self)
        ret.__dict__.pop("_param_cache", None)
        object.__setattr__(ret, "name", None)
        if mode == "init":
            for p in ret.params(include_uninit=False):
                p.initialize(p.shape)
        return ret

    def _share(self) -> Link:
        ret = copying.copy(self)
        state = ret.__dict__
        state.pop("_param_cache", None)  # it lists this link's parameter objects, not the copy's
        state["_params"] = list(self._params)
        state["_persistent"] = list(self._persistent)
        state["name"] = None
        for name in self._params:
            mine = getattr(self, name)
            shared = Parameter(mine.initializer, name=mine.name)
            shared._array = mine._array
            shared.requires_grad = mine.requires_grad
            state[name] = shared
        self._share_children(ret)
        return ret

    def _share_children(self, ret: Link) -> None:
        """Give ``ret`` (a shallow copy of this link) shared copies of the children."""

    def repeat(self, n_repeat: int, mode: str = "init") -> Sequential:
        """A ``Sequential`` of ``n_repeat`` copies of this link (``copy(mode)`` each)."""
        if mode not in ("init", "copy", "share"):
            raise ValueError(f"Link.repeat: mode must be 'init', 'copy' or 'share', got {mode!r}")
        return Sequential(*(self.copy(mode) for _ in range(max(int(n_repeat), 0))))

    def disable_update(self) -> None:
        """Freeze every parameter: no gradient is computed for it, optimizers skip it."""
        for p in self.params():
            p.requires_grad = False

    def enable_update(self) -> None:
        for p in self.params():
            p.requires_grad = True

    def __call__(self, *args, **kwargs):
        forward = getattr(self, "forward", None)
        if forward is None:
            raise TypeError(f"{type(self).__name__} defines no forward()")
        return forward(*args, **kwargs)

    def serialize(self, serializer) -> None:
        """Chainer's protocol: ``serializer(name, value)`` for each parameter and persistent
        value, then each child under ``serializer[child]`` (a saver stores, a loader copies
        into the arrays, or returns the stored array for a parameter not initialized yet,
        which then takes its shape)."""
        for name in self._params:
            param = self.__dict__[name]
            data = serializer(name, param.array)
            if param.array is None and data is not None:
                param.initialize(np.shape(data))
                param.array[...] = data
        for name in self._persistent:
            self.__dict__[name] = serializer(name, self.__dict__[name])
        self._serialize_children(serializer)

    def _serialize_children(self, serializer) -> None:
        """A plain Link has none."""


class Chain(Link):
    """A link made of named child links (``self.l1 = L.Linear(...)`` in ``init_scope``)."""

    def __init__(self, **links: Link) -> None:
        super().__init__()
        # child names in order; a dict so that adding the n-th child is O(1), not O(n)
        object.__setattr__(self, "_children", {})
        with self.init_scope():
            for name, link in links.items():
                setattr(self, name, link)

    def __setattr__(self, name: str, value: object) -> None:
        if self._within_init_scope and isinstance(value, Link):
            value.name = name
            self._children.setdefault(name, None)
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if name in getattr(self, "_children", ()):
            del self._children[name]
        super().__delattr__(name)

    def children(self) -> Iterator[Link]:
        for name in self._children:
            yield getattr(self, name)

    def namedparams(self, include_uninit: bool = True) -> Iterator[tuple[str, Parameter]]:
        yield from super().namedparams(include_uninit)
        for name in self._children:
            for path, p in getattr(self, name).namedparams(include_uninit):
                yield f"/{name}{path}", p

    def namedlinks(self, skipself: bool = False) -> Iterator[tuple[str, Link]]:
        if not skipself:
            yield "/", self
        for name in self._children:
            for path, link in getattr(self, name).namedlinks():
                yield (f"/{name}" if path == "/" else f"/{name}{path}"), link

    def namedpersistent(self) -> Iterator[tuple[str, object]]:
        yield from super().namedpersistent()
        for name in self._children:
            for path, v in getattr(self, name).namedpersistent():
                yield f"/{name}{path}", v

    def __getitem__(self, name: str) -> Link:
        return getattr(self, name)

    def add_link(self, name: str, link: Link) -> None:
        """Register ``link`` as the child ``name`` (as assigning it in ``init_scope`` does)."""
        if name in self.__dict__:
            raise AttributeError(f"cannot register a new link {name!r}: attribute exists")
        if not isinstance(link, Link):
            raise TypeError(f"Chain.add_link takes a Link, got {type(link).__name__}")
        with self.init_scope():
            setattr(self, name, link)

    def _serialize_children(self, serializer) -> None:
        for name in self._children:
            getattr(self, name).serialize(serializer[name])

    def _share_children(self, ret: Link) -> None:
        ret.__dict__["_children"] = list(self._children)
        for name in self._children:
            child = getattr(self, name)._share()
            child.name = name
            ret.__dict__[name] = child


class ChainList(Link):
    """A link made of an ordered list of child links, named ``/0``, ``/1``, ..."""

    def __init__(self, *links: Link) -> None:
        super().__init__()
        object.__setattr__(self, "_children", [])
        for link in links:
            self.append(link)

    def append(self, link: Link) -> None:
        if not isinstance(link, Link):
            raise TypeError(f"{type(self).__name__}.append takes a Link, got "
                            f"{type(link).__name__}")
        _structure[0] += 1
        link.name = str(len(self._children))
        self._children.append(link)

    def add_link(self, link: Link) -> None:
        """Chainer's name for ``append``: add ``link`` as the next child."""
        self.append(link)

    def _serialize_children(self, serializer) -> None:
        for index, child in enumerate(self._children):
            child.serialize(serializer[str(index)])

    def _share_children(self, ret: Link) -> None:
        shared = [child._share() for child in self._children]
        for i, child in enumerate(shared):
            child.name = str(i)
        ret.__dict__["_children"] = shared

    def __getitem__(self, index: int) -> Link:
        return self._children[index]

    def __len__(self) -> int:
        return len(self._children)

    def __iter__(self) -> Iterator[Link]:
        return iter(self._children)

    def children(self) -> Iterator[Link]:
        return iter(self._children)

    def namedparams(self, include_uninit: bool = True) -> Iterator[tuple[str, Parameter]]:
        yield from super().namedparams(include_uninit)
        for i, child in enumerate(self._children):
            for path, p in child.namedparams(include_uninit):
                yield f"/{i}{path}", p

    def namedlinks(self, skipself: bool = False) -> Iterator[tuple[str, Link]]:
        if not skipself:
            yield "/", self
        for i, child in enumerate(self._children):
            for path, link in child.namedlinks():
                yield (f"/{i}" if path == "/" else f"/{i}{path}"), link

    def namedpersistent(self) -> Iterator[tuple[str, object]]:
        yield from super().namedpersistent()
        for i, child in enumerate(self._children):
            for path, v in child.namedpersistent():
                yield f"/{i}{path}", v


class Sequential(ChainList):
    """Call layers (links or plain functions like ``F.relu``) one after another.

    >>> model = Sequential(L.Linear(None, 64), F.relu, L.Linear(64, 10))
    """

    def __init__(self, *layers: Link | Callable) -> None:
        super().__init__()
        object.__setattr__(self, "_layers", [])
        for layer in layers:
            self.append(layer)

    def append(self, layer: Link | Callable) -> None:  # type: ignore[override]
        if isinstance(layer, Link):
            super().append(layer)
        elif not callable(layer):
            raise TypeError(f"Sequential takes links or callables, got {type(layer).__name__}")
        self._layers.append(layer)

    def _share_children(self, ret: Link) -> None:
        super()._share_children(ret)
        copies = dict(zip(map(id, self._children), ret._children, strict=True))
        ret.__dict__["_layers"] = [copies.get(id(layer), layer) for layer in self._layers]

    def __getitem__(self, index: int):
        return self._layers[index]

    def __len__(self) -> int:
        return len(self._layers)

    def __iter__(self):
        return iter(self._layers)

    def forward(self, x):
        for layer in self._layers:
            x = layer(x)
        return x
