"""``StandardUpdater``: one training step = next batch, convert, ``optimizer.update(loss_func,
*arrays)``. It also tells the trainer where it is (``iteration``, ``epoch``,
``epoch_detail``) from its main iterator."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from graphcore.dataset.convert import call_converter, check_device, concat_examples
from graphcore.errors import SerializationError
from graphcore.serializers import serialize_link, serialize_optimizer


class Updater:
    def connect_trainer(self, trainer: Any) -> None:
        pass

    def finalize(self) -> None:
        pass


class StandardUpdater(Updater):
    def __init__(self, iterator: Any, optimizer: Any,
                 converter: Callable[..., Any] = concat_examples, device: Any = None,
                 loss_func: Callable[..., Any] | None = None, loss_scale: float | None = None,
                 auto_new_epoch: bool = True, input_device: Any = None) -> None:
        check_device(device)
        check_device(input_device)
        self._iterators = iterator if isinstance(iterator, dict) else {"main": iterator}
        self._optimizers = optimizer if isinstance(optimizer, dict) else {"main": optimizer}
        if loss_scale is not None:  # Chainer's: the optimizers scale the loss for backward
            for each in self._optimizers.values():
                each.set_loss_scale(loss_scale)
        self.converter = converter
        self.device = device
        self.loss_func = loss_func
        self.auto_new_epoch = auto_new_epoch
        self.iteration = 0

    @property
    def epoch(self) -> int:
        return self._iterators["main"].epoch

    @property
    def epoch_detail(self) -> float:
        return self._iterators["main"].epoch_detail

    @property
    def previous_epoch_detail(self) -> float | None:
        return self._iterators["main"].previous_epoch_detail

    @property
    def is_new_epoch(self) -> bool:
        return self._iterators["main"].is_new_epoch

    def get_optimizer(self, name: str) -> Any:
        return self._optimizers[name]

    def get_all_optimizers(self) -> dict[str, Any]:
        return dict(self._optimizers)

    def get_iterator(self, name: str) -> Any:
        return self._iterators[name]

    def finalize(self) -> None:
        for iterator in self._iterators.values():
            finalize = getattr(iterator, "finalize", None)
            if finalize is not None:
                finalize()

    def update(self) -> None:
        self.update_core()
        self.iteration += 1

    def update_core(self) -> None:
        iterator = self._iterators["main"]
        batch = iterator.next()
        in_arrays = call_converter(self.converter, batch, self.device)
        optimizer = self._optimizers["main"]
        loss_func = self.loss_func or optimizer.target
        if isinstance(in_arrays, tuple):
            optimizer.update(loss_func, *in_arrays)
        elif isinstance(in_arrays, dict):
            optimizer.update(loss_func, **in_arrays)
        else:
            optimizer.update(loss_func, in_arrays)
        if self.auto_new_epoch and iterator.is_new_epoch:
            optimizer.new_epoch()

    def serialize(self, serializer: Any) -> None:
        for name, iterator in self._iterators.items():
            iterator.serialize(serializer["iterator:" + name])
        for name, optimizer in self._optimizers.items():
            # The model first: optimizer state is loaded into initialized parameters only.
            serialize_link(serializer["model:" + name], optimizer.target)
            serialize_optimizer(serializer["optimizer:" + name], optimizer)
        self.iteration = serializer("iteration", self.iteration)
        if self.iteration < 0:
            raise SerializationError(f"{serializer.path}iteration: {self.iteration} is no "
                                     "step count")
