"""Regenerate specs/data/waves.npz, the noisy sine waves `specs/waves_rnn.yaml` trains on.
Run from the repository root: python scripts/make_waves.py. The output is a pure function of
the seed below (numpy's legacy RandomState), so the file's SHA-256 in specs/data/README.md
says whether a copy is this one."""

from __future__ import annotations

from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[1] / "specs" / "data" / "waves.npz"
SEED = 2024
WAVES = 160
SHORTEST, LONGEST = 4, 16  # time steps per wave, uniform
PERIODS = (6.0, 10.0, 16.0)  # steps per cycle, one per class (the labels)
NOISE = 0.05


def waves() -> dict[str, np.ndarray]:
    rng = np.random.RandomState(SEED)
    lengths = rng.randint(SHORTEST, LONGEST + 1, size=WAVES)
    labels = rng.randint(0, len(PERIODS), size=WAVES).astype(np.int32)
    amplitude = rng.uniform(0.5, 1.0, size=WAVES)
    phase = rng.uniform(0.0, 2 * np.pi, size=WAVES)
    parts = []
    for n, k, a, p in zip(lengths, labels, amplitude, phase, strict=True):
        t = np.arange(n)
        parts.append(a * np.sin(2 * np.pi * t / PERIODS[k] + p) + NOISE * rng.randn(n))
    values = np.concatenate(parts).astype(np.float32)[:, None]
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    return {"values": values, "offsets": offsets, "labels": labels}


def main() -> None:
    arrays = waves()
    np.savez_compressed(OUT, **arrays)  # numpy writes fixed zip timestamps: the same bytes
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
