"""A spec whose graph runs once per example, fed from data: variable-length sequences
(``s``: an .npz's values and offsets, or a JSON Lines field) and one integer label per example
(``t``), of two classes the sequences' values tell apart."""

from __future__ import annotations

import json

import numpy as np

N = 24

SEQUENCES = """graphtool: 1
name: seq
seed: 0
data:
  file: seq.npz
  s: {values: feats, offsets: starts}
  t: {key: t}
validation: 0.25
train: {epochs: 2, batch_size: 6, shuffle: false, metrics: [accuracy],
        optimizer: {name: sgd, lr: 0.1}}
graph:
  - {op: linear, from: s, out_size: 2, name: proj}
  - {op: sum, axis: 0}
  - {op: reshape, shape: [1, 2], to: logits}
  - {op: reshape, from: t, shape: [1], to: label}
loss: {op: softmax_cross_entropy, from: [logits, label]}
outputs: [logits]
"""


JSONL = SEQUENCES.replace("file: seq.npz", "file: seq.jsonl").replace(
    "s: {values: feats, offsets: starts}", "s: {field: s}").replace(
    "t: {key: t}", "t: {column: t, dtype: int32}")


def write_sequences(folder, n=N, seed=0):
    rng = np.random.RandomState(seed)
    lengths = 1 + np.arange(n) % 5
    t = rng.randint(0, 2, n).astype(np.int32)
    feats = [rng.randn(length, 3) + (2 * t[i] - 1) for i, length in enumerate(lengths)]
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    np.savez(folder / "seq.npz", feats=np.concatenate(feats).astype(np.float32),
             starts=starts, t=t)
    with open(folder / "seq.jsonl", "w") as f:
        for i in range(n):
            f.write(json.dumps({"s": feats[i].tolist(), "t": int(t[i])}) + "\n")
    return [np.float32(a) for a in feats], t


