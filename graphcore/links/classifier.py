"""``Classifier``: a predictor with a loss and an accuracy, as Chainer's ``L.Classifier``."""

from __future__ import annotations

from graphcore.links.link import Chain, Link
from graphcore.ops.evaluation import accuracy
from graphcore.ops.loss import softmax_cross_entropy
from graphcore.reporter import report


class Classifier(Chain):
    """``model(x, t)`` runs ``predictor(x)``, returns ``lossfun(y, t)`` and keeps ``y``,
    ``loss`` and (when ``compute_accuracy``) ``accuracy`` as attributes of the last call.

    ``label_key`` picks the label among the arguments: a position (default: the last) or a
    keyword name; the other arguments go to the predictor.

    >>> model = Classifier(MLP())
    >>> loss = model(x, t)
    >>> float(model.accuracy.array)
    """

    compute_accuracy = True

    def __init__(self, predictor: Link, lossfun=softmax_cross_entropy, accfun=accuracy,
                 label_key: int | str = -1) -> None:
        if not isinstance(label_key, int | str) or isinstance(label_key, bool):
            raise TypeError(f"Classifier: label_key must be int or str, got "
                            f"{type(label_key).__name__}")
        super().__init__()
        self.lossfun = lossfun
        self.accfun = accfun
        self.label_key = label_key
        self.y = None
        self.loss = None
        self.accuracy = None
        with self.init_scope():
            self.predictor = predictor

    def forward(self, *args, **kwargs):
        if isinstance(self.label_key, int):
            if not -len(args) <= self.label_key < len(args):
                raise ValueError(f"Classifier: Label key {self.label_key} is out of bounds "
                                 f"for {len(args)} positional arguments")
            t = args[self.label_key]
            key = self.label_key % len(args)
            args = args[:key] + args[key + 1:]
        else:
            if self.label_key not in kwargs:
                raise ValueError(f'Classifier: Label key "{self.label_key}" is not found')
            kwargs = dict(kwargs)
            t = kwargs.pop(self.label_key)
        self.y = None
        self.loss = None
        self.accuracy = None
        self.y = self.predictor(*args, **kwargs)
        self.loss = self.lossfun(self.y, t)
        report({"loss": self.loss}, self)
        if self.compute_accuracy:
            self.accuracy = self.accfun(self.y, t)
            report({"accuracy": self.accuracy}, self)
        return self.loss
