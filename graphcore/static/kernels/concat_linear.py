"""Kernels for ``concat_linear`` (``passes/fuse_concat_linear.py``): a linear layer of joined
parts, computed against column blocks of its weight, and the node's gradients.

Forward, for parts ``p_k`` of widths ``n_k`` at offsets ``o_k`` and ``W_k = W[:, o_k:o_k+n_k]``
(a view of the weight, bound once): ``out <- p_0 @ W_0.T``, then for each further part
``tmp <- p_k @ W_k.T`` and ``out += tmp``, then the bias and the activation in place. Gradient
of part ``i``: ``gy @ W_i``; of ``W``: ``gy.T @ p_k`` into each column block of ``out``; of the
bias: ``gy`` summed over the rows (as ``ones @ gy``, one BLAS call); of the activation (a vjp
with ``of=tanh``, ...): from the node's value, as for ``linear_act``.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from graphcore import errors
from graphcore.static.ir import Node
from graphcore.static.kernels.base import activation_steps, chain, elementwise_step, rows, scratch


def _blocks(node: Node, W: np.ndarray) -> list[np.ndarray]:
    blocks, offset = [], 0
    for n in node.attrs["sizes"]:
        blocks.append(W[:, offset:offset + n])
        offset += n
    return blocks


def concat_linear(node: Node, ins: list, out: np.ndarray, ctx: Any):
    k = len(node.attrs["sizes"])
    parts, W = ins[:k], ins[k]
    blocks = _blocks(node, W)
    steps = [partial(np.matmul, parts[0], blocks[0].T, out=out)]
    if k > 1:
        tmp = np.empty_like(out)
        for part, block in zip(parts[1:], blocks[1:], strict=True):
            steps += [partial(np.matmul, part, block.T, out=tmp),
                      partial(np.add, out, tmp, out=out)]
    if len(ins) == k + 2:
        steps.append(partial(np.add, out, ins[k + 1], out=out))
    steps += activation_steps(node.attrs.get("activation"), out)
    return chain(steps)


def vjp_concat_linear(node: Node, fwd: Node, fwd_ins: list, fwd_out, gys: list,
                      out: np.ndarray, ctx: Any):
    of = node.attrs["of"]
    gy = gys[0]
    if of != "concat_linear":  # the fused activation's vjp: from the node's value
        step = elementwise_step(f"vjp:{of}", {}, [gy, fwd_out], out, scratch(out))
        if step is None:
            raise errors.TraceError(f"concat_linear: no kernel for {node.text()}")
        return step
    k = len(fwd.attrs["sizes"])
    index = node.attrs["index"]
    blocks = _blocks(fwd, fwd_ins[k])
    if index < k:
        return partial(np.matmul, gy, blocks[index], out=out)
    gy2 = rows(gy)
    if index == k + 1:  # the bias: a product with ones (a third of a reduction's cost)
        if gy2 is None:
            return lambda: np.add.reduce(gy.reshape(-1, gy.shape[-1]), axis=0, out=out)
        return partial(np.matmul, np.ones(gy2.shape[0], gy2.dtype), gy2, out=out)
    steps = []
    for part, block in zip(fwd_ins[:k], _blocks(fwd, out), strict=True):
        part2 = rows(part)
        if gy2 is None or part2 is None:  # a strided view: reshaped at each replay
            steps.append(partial(_product, gy, part, block))
        else:
            steps.append(partial(np.matmul, gy2.T, part2, out=block))
    return chain(steps)


def _product(gy: np.ndarray, part: np.ndarray, out: np.ndarray) -> None:
    np.matmul(gy.reshape(-1, gy.shape[-1]).T, part.reshape(-1, part.shape[-1]), out=out)


FORWARD = {"concat_linear": concat_linear}
