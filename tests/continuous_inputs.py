"""Inputs for gradient checks of specs whose shipped data has ties.

Real images are full of equal pixels (zeros), so max pooling windows tie and the loss has no
derivative at that data: finite differences cannot check it there. Those specs are checked on
continuous values of the same shape (the same ops and parameters), read with ``--input``.
"""

import numpy as np

CONTINUOUS_INPUTS = {"digits_cnn": {"x": ((8, 64), "float32"), "t": ((8,), "int32")}}


def continuous_arrays(name):
    """``{input: array}`` of continuous values for spec ``name`` (empty: its own inputs do)."""
    rng = np.random.default_rng(0)
    return {key: (rng.uniform(0, 16, shape) if dtype == "float32"
                  else rng.integers(0, 10, shape)).astype(dtype)
            for key, (shape, dtype) in CONTINUOUS_INPUTS.get(name, {}).items()}


def continuous_inputs(name, folder):
    """``--input`` options giving spec ``name`` continuous inputs saved under ``folder``."""
    args = []
    for key, values in continuous_arrays(name).items():
        np.save(folder / f"{key}.npy", values)
        args += ["--input", f"{key}={folder / f'{key}.npy'}"]
    return args
