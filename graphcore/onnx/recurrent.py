"""The spec's recurrent layers (``lstm``, ``gru``: Chainer's NStepLSTM / NStepGRU from zero
states) -> ONNX ``LSTM`` / ``GRU``, one node per stacked layer, over a sequence of any length.

Traced, such a layer is one op per time step (a graph for one length); ``regions`` keeps it
whole instead. Its weights are repacked at export into ONNX's gate order, as initializers
``<scope>/<layer>/W``, ``/R``, ``/B``:

- LSTM: Chainer's ``w0..w3`` (input), ``w4..w7`` (hidden) are the gates i, f, a (cell), o;
  ONNX wants i, o, f, c;
- GRU: Chainer's ``w0..w2`` / ``w3..w5`` are r, z, h; ONNX wants z, r, h, with
  ``linear_before_reset`` (Chainer applies r after the hidden product and its bias).
"""

from __future__ import annotations

import numpy as np

from graphcore.onnx.errors import ExportError

_ORDER = {"lstm": ([0, 3, 1, 2], [4, 7, 5, 6]), "gru": ([1, 0, 2], [4, 3, 5])}


def emit_rnn(e, region, ins, types, other):
    kind, link = region.constants["kind"], region.constants["layer"]
    (x,), ((shape, _dtype),) = ins, types
    if len(shape) not in (2, 3):
        raise ExportError(f"{kind} over an input of shape {shape}", region.step.loc)
    scope = region.constants["scope"]
    seq = e.op("Unsqueeze", [x, e.const(np.asarray([1], np.int64))]) if len(shape) == 2 \
        else e.op("Transpose", [x], perm=[1, 0, 2])  # (length, batch, features)
    for k, layer in enumerate(link):
        w_order, r_order = _ORDER[kind]
        weights = [getattr(layer, f"w{j}").array for j in range(link.n_weights)]
        biases = [getattr(layer, f"b{j}").array for j in range(link.n_weights)]
        w = np.concatenate([weights[j] for j in w_order])[None]
        r = np.concatenate([weights[j] for j in r_order])[None]
        b = np.concatenate([biases[j] for j in w_order + r_order])[None]
        names = [e.param(f"{scope}/{k}/{n}", a) for a, n in ((w, "W"), (r, "R"), (b, "B"))]
        attrs = {"hidden_size": int(link.out_size)}
        if kind == "gru":
            attrs["linear_before_reset"] = 1
        y = e.op(kind.upper(), [seq, *names], **attrs)  # (length, 1 direction, batch, hidden)
        seq = e.op("Squeeze", [y, e.const(np.asarray([1], np.int64))])
    out = e.op("Squeeze", [seq, e.const(np.asarray([1], np.int64))]) if len(shape) == 2 \
        else e.op("Transpose", [seq], perm=[1, 0, 2])
    return [out], [set()]
