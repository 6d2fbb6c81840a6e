"""A small data-fed sequence spec for the training tests: ``write_sequences(folder)`` writes
``seq.npz`` (``examples`` sequences of 1 value per step, lengths 3 to 10, seeded) and a spec
over it (an RNN predicting each step from the steps before: a loss over the sequence alone),
optionally with a live ``if`` in the loop body (which padding refuses) or with dropout (which
batching refuses in training)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

BODY_IF = """      - if: sum(h) > 100.0
        then: [{op: scale, from: h, by: 0.5, to: h}]
"""
DROPOUT = """      - {op: dropout, ratio: 0.1, to: h}
"""


def write_sequences(folder: Path, *, examples: int = 24, epochs: int = 2, batch_size: int = 4,
                    body: str = "", validation: bool = True, shuffle: bool = True,
                    name: str = "seqs") -> Path:
    rng = np.random.RandomState(5)
    lengths = rng.randint(3, 11, size=examples)
    values = rng.randn(int(lengths.sum()), 1).astype(np.float32)
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    np.savez(folder / "seq.npz", values=values, offsets=offsets)
    text = f"""graphtool: 1
name: {name}
seed: 0
data:
  file: seq.npz
  s: {{values: values, offsets: offsets}}
{"validation: 0.25" if validation else ""}
train: {{epochs: {epochs}, batch_size: {batch_size}, shuffle: {str(shuffle).lower()},
        optimizer: {{name: adam, alpha: 0.01}}}}
graph:
  - for_each: s
    as: x_t
    carry: {{h: {{zeros: [1, 4]}}, err: {{zeros: [1, 1]}}}}
    body:
      - {{op: reshape, from: x_t, shape: [1, 1], to: x}}
      - {{op: linear, from: h, out_size: 1, name: readout}}
      - {{op: sub, from: [_, x]}}
      - square
      - {{op: add, from: [_, err], to: err}}
      - {{op: concat, from: [x, h], axis: 1}}
      - {{op: linear, out_size: 4, name: cell}}
      - {{op: tanh, to: h}}
{body}loss: {{op: sum, from: err}}
outputs: [err]
"""
    path = folder / f"{name}.yaml"
    path.write_text(text)
    return path
