"""How static mode for specs sums the examples' gradients (one at a time and by groups)."""

from __future__ import annotations

import numpy as np


def accumulate_grad(grads: dict[str, np.ndarray], name: str, buf: np.ndarray, n: int
                    ) -> None:
    """Add a gradient, scaled by ``1 / n`` (the mean over examples), into ``grads``; with one
    example the buffer itself (lent, as a compiled call lends its gradient buffers)."""
    if n == 1:
        grads[name] = buf
    elif name in grads:
        grads[name] += buf * (1.0 / n)
    else:
        grads[name] = buf * (1.0 / n)
