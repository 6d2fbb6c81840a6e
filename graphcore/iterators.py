"""``SerialIterator``: mini-batches of a dataset in order or shuffled, Chainer's semantics.

Each ``next()`` returns a list of ``batch_size`` examples. With ``repeat`` a batch that runs
past the end of an epoch is completed from the next epoch's order; without it the last batch
is short and the iterator then stops. ``epoch``, ``epoch_detail`` (epochs as a float),
``previous_epoch_detail`` and ``is_new_epoch`` tell the trainer where it is. Shuffled orders
come from ``order_sampler`` (default: ``ShuffleOrderSampler`` on numpy's global generator, so
``np.random.seed`` makes runs repeatable; a snapshot of a Trainer saves that generator too).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from graphcore.errors import SerializationError
from graphcore.serialization import Loader, serialize_random_state


class ShuffleOrderSampler:
    """A fresh random permutation for every epoch."""

    def __init__(self, random_state: np.random.RandomState | None = None) -> None:
        self._random = random_state  # None: numpy's global generator

    def __call__(self, current_order: np.ndarray, current_position: int) -> np.ndarray:
        rng = np.random if self._random is None else self._random
        return rng.permutation(len(current_order))

    def serialize(self, serializer: Any) -> None:
        if self._random is not None:
            serialize_random_state(serializer, self._random)


class SerialIterator:
    def __init__(self, dataset: Sequence[Any], batch_size: int, repeat: bool = True,
                 shuffle: bool | None = None,
                 order_sampler: Callable[[np.ndarray, int], np.ndarray] | None = None) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int | np.integer) \
                or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        if len(dataset) == 0:
            raise ValueError("SerialIterator: the dataset is empty")
        self.dataset = dataset
        self.batch_size = int(batch_size)
        self._repeat = repeat
        self._shuffle = shuffle
        if self._shuffle is not None:
            if order_sampler is not None:
                raise ValueError("`shuffle` is not `None` and a custom `order_sampler` is "
                                 "set. Please set `shuffle` to `None` to use the custom "
                                 "order sampler.")
            if self._shuffle:
                order_sampler = ShuffleOrderSampler()
        elif order_sampler is None:
            order_sampler = ShuffleOrderSampler()
        self.order_sampler = order_sampler
        self.reset()

    def __next__(self) -> list[Any]:
        if not self._repeat and self.epoch > 0:
            raise StopIteration
        self._previous_epoch_detail = self.epoch_detail
        i = self.current_position
        i_end = i + self.batch_size
        n = self._epoch_size
        batch = self._examples(i, i_end)
        if i_end >= n:
            if self._repeat:
                rest = i_end - n
                if self._order is not None:
                    new_order = self.order_sampler(self._order, i)
                    if len(new_order) != len(self._order):
                        raise ValueError("The size of order does not match the size of the "
                                         "previous order.")
                    self._order = new_order
                if rest > 0:
                    batch.extend(self._examples(0, rest))
                self.current_position = rest
            else:
                self.current_position = 0
            self.epoch += 1
            self.is_new_epoch = True
        else:
            self.is_new_epoch = False
            self.current_position = i_end
        return batch

    next = __next__

    def __iter__(self) -> SerialIterator:
        return self

    def _examples(self, start: int, stop: int) -> list[Any]:
        if self._order is None:
            return list(self.dataset[start:stop])
        return [self.dataset[int(index)] for index in self._order[start:stop]]

    @property
    def _epoch_size(self) -> int:
        return len(self.dataset) if self._order is None else len(self._order)

    @property
    def epoch_detail(self) -> float:
        return self.epoch + self.current_position / self._epoch_size

    @property
    def previous_epoch_detail(self) -> float | None:
        return None if self._previous_epoch_detail < 0 else self._previous_epoch_detail

    @property
    def repeat(self) -> bool:
        return self._repeat

    def reset(self) -> None:
        self.current_position = 0
        self.epoch = 0
        self.is_new_epoch = False
        self._previous_epoch_detail = -1.0
        self._order = None if self.order_sampler is None else \
            self.order_sampler(np.arange(len(self.dataset)), 0)

    def finalize(self) -> None:
        pass

    def serialize(self, serializer: Any) -> None:
        self.current_position = serializer("current_position", self.current_position)
        self.epoch = serializer("epoch", self.epoch)
        self.is_new_epoch = serializer("is_new_epoch", self.is_new_epoch)
        if self._order is not None:
            order = serializer("order", self._order)
            if isinstance(serializer, Loader):
                self._order = np.asarray(order)
                if not np.array_equal(np.sort(self._order), np.arange(len(self._order))):
                    raise SerializationError(
                        f"{serializer.path}order: not an order of the {len(self._order)} "
                        "examples (each index from 0 once)")
        self._previous_epoch_detail = serializer("previous_epoch_detail",
                                                 float(self._previous_epoch_detail))
        if isinstance(serializer, Loader) and not (
                0 <= self.current_position <= self._epoch_size and self.epoch >= 0):
            raise SerializationError(
                f"{serializer.path}current_position, epoch: {self.current_position}, "
                f"{self.epoch} is no position in an epoch of {self._epoch_size} examples")
        if hasattr(self.order_sampler, "serialize"):
            self.order_sampler.serialize(serializer["order_sampler"])
