"""Gradient-check data for every registered op: ``CASES[op name] -> [OpCase, ...]``.

A case says how to draw each input (shape and value domain), which constructor keyword
arguments to pass, and a label for the test id.  Value domains keep each op inside the region
where it is differentiable: positive inputs for log/sqrt/pow, values away from kinks for
relu/abs/clip, no ties for max/min/maximum, integer labels and ids, boolean conditions.
Integer and boolean inputs are constants automatically (``check_backward`` leaves them out).

Adding an op to the registry without adding its cases here fails ``test_gradient_check.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

Draw = Callable[[np.random.Generator], np.ndarray]


@dataclass(frozen=True)
class OpCase:
    """One gradient check of one op: input recipes, constructor kwargs, a test-id label.

    ``options`` overrides the check's keyword arguments, for the two cases that need it (each
    says why below); it never loosens a tolerance to hide a wrong gradient.
    """

    inputs: tuple[Draw, ...]
    attrs: dict[str, Any] = field(default_factory=dict)
    label: str = ""
    options: dict[str, Any] = field(default_factory=dict)

    def draw(self, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
        return tuple(make(rng) for make in self.inputs)


# A sparse 2x3 matrix's coordinates (a repeated one adds up), and a batch of two with the
# second padded (-1) to the first's number of entries.
_COO_ROW = np.array([0, 1, 1, 0], np.int32)
_COO_COL = np.array([2, 0, 1, 2], np.int32)
_COO_BATCH_ROW = np.array([[0, 0, 1, 1], [1, 0, -1, -1]], np.int32)
_COO_BATCH_COL = np.array([[0, 2, 1, 2], [1, 0, -1, -1]], np.int32)


# --- input recipes --------------------------------------------------------------------------

def normal(*shape: int) -> Draw:
    """Standard normal float64 values."""
    return lambda rng: rng.standard_normal(shape)


def uniform(*shape: int, low: float = -1.0, high: float = 1.0) -> Draw:
    return lambda rng: rng.uniform(low, high, shape)


def positive(*shape: int) -> Draw:
    """Values in [0.5, 2] (log, sqrt, divisors, bases of real powers)."""
    return uniform(*shape, low=0.5, high=2.0)


def avoiding(*shape: int, points: tuple[float, ...] = (0.0,), margin: float = 0.05,
             low: float = -1.0, high: float = 1.0) -> Draw:
    """Uniform values at least ``margin`` away from each kink in ``points``."""

    def draw(rng: np.random.Generator) -> np.ndarray:
        x = rng.uniform(low, high, shape)
        near = np.zeros(shape, bool)
        for p in points:
            near |= np.abs(x - p) < margin
        while near.any():
            x[near] = rng.uniform(low, high, int(near.sum()))
            near[:] = False
            for p in points:
                near |= np.abs(x - p) < margin
        return x

    return draw


def distinct(*shape: int, offset: float = 0.0) -> Draw:
    """Shuffled values on a grid of step 0.1 (plus ``offset``): no two elements tie, and two
    arrays with offsets 0 and 0.05 never tie with each other (max, min, maximum, minimum)."""

    def draw(rng: np.random.Generator) -> np.ndarray:
        n = int(np.prod(shape, dtype=np.int64))
        grid = (np.arange(n) - n // 2) * 0.1 + offset
        return rng.permutation(grid).reshape(shape)

    return draw


def ints(*shape: int, low: int = 0, high: int = 5) -> Draw:
    """Integer labels or ids in ``[low, high)``."""
    return lambda rng: rng.integers(low, high, shape)


def permutation(n: int, dtype: type = np.int64) -> Draw:
    """A random permutation of ``range(n)`` (``permutate``'s indices)."""
    return lambda rng: rng.permutation(n).astype(dtype)


def bools(*shape: int) -> Draw:
    return lambda rng: rng.random(shape) < 0.5


def fixed(values: Any) -> Draw:
    """Exactly these values (repeated ids, ignored labels, exact zeros)."""
    array = np.array(values)
    return lambda rng: array.copy()


# Dropout is checked with a fixed, already scaled mask (ratio 0.5), as Chainer's tests do.
_DROPOUT_MASK = np.array([[2.0, 0.0, 2.0, 2.0], [0.0, 2.0, 2.0, 0.0], [2.0, 2.0, 0.0, 2.0]])
# A float32 output rounds x + eps * r to ~6e-8 relative: steps of 1e-2 keep that error at ~1e-5
# (the op is linear, so a large step costs no truncation error).
_FLOAT32_OUTPUT = {"eps": 1e-2, "atol": 1e-5, "rtol": 1e-4}
# Three zeros make the all-product flat to second order, which the smoothness heuristic of
# detect_nondifferentiable cannot tell from a kink; the gradient check itself still runs.
_FLAT = {"detect_nondifferentiable": False}


def _signed(*shape: int) -> Draw:
    """Magnitudes in [0.6, 1.4] with random signs: products of many stay near 1."""
    return avoiding(*shape, margin=0.6, low=-1.4, high=1.4)


def _binary(shape_a: tuple[int, ...], shape_b: tuple[int, ...],
            b: Callable[..., Draw] = normal, a: Callable[..., Draw] = normal) -> list[OpCase]:
    return [OpCase((a(*shape_a), b(*shape_a)), label="same-shape"),
            OpCase((a(*shape_a), b(*shape_b)), label="broadcast"),
            OpCase((a(), b(*shape_a)), label="0-d-broadcast")]


def _reductions(draw: Callable[..., Draw]) -> list[OpCase]:
    return [OpCase((draw(3, 4),), label="all"),
            OpCase((draw(3, 4),), {"axis": 1}, label="axis1"),
            OpCase((draw(2, 3, 4),), {"axis": -1, "keepdims": True}, label="axis-1-keepdims"),
            OpCase((draw(2, 3, 4),), {"axis": (0, 2)}, label="axes02"),
            OpCase((draw(2, 3, 4),), {"axis": [0, 1], "keepdims": True}, label="list-keepdims")]


def _extremum_pair() -> list[OpCase]:
    return [OpCase((distinct(3, 4), distinct(3, 4, offset=0.05)), label="same-shape"),
            OpCase((distinct(3, 4), distinct(4, offset=0.05)), label="broadcast"),
            OpCase((distinct(1, 4, offset=0.05), distinct(3, 1)), label="both-broadcast")]


def _softmax_like() -> list[OpCase]:
    return [OpCase((normal(3, 4),), label="axis1"),
            OpCase((normal(2, 3, 4),), {"axis": -1}, label="axis-1-3d"),
            OpCase((normal(3, 4),), {"axis": 0}, label="axis0")]


CASES: dict[str, list[OpCase]] = {
    # arithmetic
    "add": _binary((3, 4), (4,)),
    "multi_add": [OpCase((normal(3, 4), normal(3, 4), normal(3, 4)), label="three"),
                  OpCase((normal(3, 4), normal(4), normal(3, 1), normal(3, 4)),
                         label="broadcast"),
                  OpCase((normal(2, 3),), label="one")],
    "sub": _binary((3, 4), (3, 1)),
    "mul": _binary((2, 3, 4), (3, 1)),
    "div": _binary((3, 4), (4,), b=positive),
    "pow": _binary((3, 4), (4,), a=positive),
    "neg": [OpCase((normal(3, 4),))],
    "add_scalar": [OpCase((normal(3, 4),), {"value": 1.5})],
    "scale": [OpCase((normal(3, 4),), {"by": -2.5})],
    "rsub_scalar": [OpCase((normal(3, 4),), {"value": 3})],
    "rdiv_scalar": [OpCase((positive(3, 4),), {"value": 2.0})],
    "pow_scalar": [OpCase((normal(3, 4),), {"exponent": 2}, label="square"),
                   OpCase((normal(3, 4),), {"exponent": 3}, label="cube"),
                   OpCase((positive(3, 4),), {"exponent": -1.5}, label="negative-real")],
    "rpow_scalar": [OpCase((normal(3, 4),), {"base": 2.0}, label="base2"),
                    OpCase((normal(3, 4),), {"base": 0.5}, label="base-half")],
    # elementwise math
    "exp": [OpCase((normal(3, 4),))],
    "log": [OpCase((positive(3, 4),))],
    "sqrt": [OpCase((positive(3, 4),))],
    "square": [OpCase((normal(3, 4),))],
    "abs": [OpCase((avoiding(3, 4),))],
    "maximum": _extremum_pair(),
    "minimum": _extremum_pair(),
    "clip": [OpCase((avoiding(4, 5, points=(-0.5, 0.5)),), {"x_min": -0.5, "x_max": 0.5})],
    "sin": [OpCase((normal(3, 4),))],
    "cos": [OpCase((normal(3, 4),))],
    "tan": [OpCase((uniform(3, 4, low=-1.2, high=1.2),))],
    "arcsin": [OpCase((uniform(3, 4, low=-0.9, high=0.9),))],
    "arccos": [OpCase((uniform(3, 4, low=-0.9, high=0.9),))],
    "arctan": [OpCase((normal(3, 4),))],
    "arctan2": [OpCase((normal(3, 4), positive(3, 4)), label="same-shape"),
                OpCase((normal(3, 4), avoiding(4, margin=0.2)), label="broadcast")],
    "sinh": [OpCase((normal(3, 4),))],
    "cosh": [OpCase((normal(3, 4),))],
    "arctanh": [OpCase((uniform(3, 4, low=-0.9, high=0.9),))],
    "expm1": [OpCase((normal(3, 4),))],
    "log1p": [OpCase((uniform(3, 4, low=-0.5, high=2.0),))],
    "log2": [OpCase((positive(3, 4),))],
    "log10": [OpCase((positive(3, 4),))],
    "erf": [OpCase((normal(3, 4),))],
    "erfc": [OpCase((normal(3, 4),))],
    "ndtr": [OpCase((normal(3, 4),))],
    # divisors in [0.5, 2], dividends away from the multiples of the divisor (the kinks)
    "fmod": [OpCase((fixed([[0.3, -1.7, 2.2], [-0.4, 1.3, -2.9]]),
                     fixed([[0.7, 1.1, -0.9], [0.6, -1.6, 1.2]])), label="same-shape"),
             OpCase((fixed([[0.3, -1.7, 2.2], [-0.4, 1.3, -2.9]]), fixed([0.7, -1.6, 1.25])),
                    label="broadcast")],
    "where": [OpCase((bools(3, 4), normal(3, 4), normal(3, 4)), label="same-shape"),
              OpCase((bools(3, 1), normal(4), normal(3, 4)), label="broadcast")],
    # activations
    "relu": [OpCase((avoiding(3, 4),))],
    "leaky_relu": [OpCase((avoiding(3, 4),), {"slope": 0.2})],
    "sigmoid": [OpCase((normal(3, 4),))],
    "tanh": [OpCase((normal(3, 4),))],
    "softplus": [OpCase((normal(3, 4),), label="beta1"),
                 OpCase((normal(3, 4),), {"beta": 2.0}, label="beta2")],
    # shapes and indexing
    "reshape": [OpCase((normal(2, 6),), {"shape": (3, 4)}, label="3x4"),
                OpCase((normal(2, 3, 2),), {"shape": (-1,)}, label="flatten"),
                OpCase((normal(2, 6),), {"shape": (3, -1, 2)}, label="inferred")],
    "transpose": [OpCase((normal(2, 3, 4),), label="reverse"),
                  OpCase((normal(2, 3, 4),), {"axes": (1, 2, 0)}, label="axes120"),
                  OpCase((normal(2, 3, 4),), {"axes": (-1, 0, 1)}, label="negative-axes")],
    "broadcast_to": [OpCase((normal(3, 1),), {"shape": (2, 3, 4)}, label="expand"),
                     OpCase((normal(),), {"shape": (2, 2)}, label="0-d")],
    "sum_to": [OpCase((normal(2, 3, 4),), {"shape": (3, 1)}, label="lead-and-inner"),
               OpCase((normal(2, 3, 4),), {"shape": (1, 4)}, label="keep-last"),
               OpCase((normal(2, 3),), {"shape": ()}, label="to-0-d")],
    "cast": [OpCase((lambda rng: rng.standard_normal((3, 4)).astype(np.float32),),
                    {"dtype": "float64"}, label="f32-to-f64"),
             OpCase((normal(3, 4),), {"dtype": "float32"}, label="f64-to-f32",
                    options=_FLOAT32_OUTPUT)],
    "concat": [OpCase((normal(2, 3), normal(2, 1), normal(2, 2)), label="axis1"),
               OpCase((normal(1, 3), normal(2, 3)), {"axis": 0}, label="axis0"),
               OpCase((normal(2, 2, 3), normal(2, 2, 1)), {"axis": -1}, label="axis-1")],
    "stack": [OpCase((normal(2, 3), normal(2, 3), normal(2, 3)), label="axis0"),
              OpCase((normal(2, 3), normal(2, 3)), {"axis": 1}, label="axis1"),
              OpCase((normal(2, 3), normal(2, 3)), {"axis": -1}, label="axis-1")],
    "split_axis": [
        OpCase((normal(6, 2),), {"indices_or_sections": 3}, label="3-sections"),
        OpCase((normal(2, 5),), {"indices_or_sections": [1, 3], "axis": 1}, label="indices"),
        OpCase((normal(2, 3, 4),), {"indices_or_sections": 2, "axis": -1}, label="axis-1"),
    ],
    "get_item": [
        OpCase((normal(4, 5),), {"index": (slice(1, 3), slice(None, None, 2))}, label="slices"),
        OpCase((normal(4, 5),), {"index": 2}, label="int"),
        OpCase((normal(4, 5),), {"index": np.array([0, 2, 0, 3])}, label="repeated-rows"),
        OpCase((normal(3, 4),), {"index": (slice(None), np.array([1, 1, 3]))},
               label="repeated-columns"),
        OpCase((normal(3, 4),), {"index": (np.array([0, 2, 2]), np.array([1, 3, 3]))},
               label="repeated-pairs"),
        OpCase((normal(3, 4),), {"index": np.array([[True, False, True, False],
                                                    [False, False, True, True],
                                                    [True, True, False, False]])},
               label="bool-mask"),
        OpCase((normal(2, 3, 4),), {"index": (Ellipsis, None, 1)}, label="ellipsis-newaxis"),
    ],
    "scatter_add": [
        OpCase((normal(4),), {"index": np.array([0, 2, 0, 4]), "shape": (5,)},
               label="repeated"),
        OpCase((normal(2, 5),), {"index": (slice(1, 3),), "shape": (4, 5)}, label="slice"),
        OpCase((normal(2, 3),), {"index": (slice(None), np.array([1, 1, 3])),
                                 "shape": (2, 5)}, label="repeated-columns"),
    ],
    "permutate": [
        OpCase((normal(4, 3), fixed([2, 0, 3, 1])), label="axis0"),
        OpCase((normal(4, 3), fixed([2, 0, 3, 1])), {"inv": True}, label="axis0-inv"),
        OpCase((normal(2, 5, 3), permutation(5, np.int32)), {"axis": 1}, label="middle-axis"),
        OpCase((normal(2, 5, 3), permutation(5)), {"axis": 1, "inv": True},
               label="middle-axis-inv"),
        OpCase((normal(2, 3, 4), fixed([1, 3, 0, 2])), {"axis": -1}, label="axis-1"),
        OpCase((normal(2, 3, 4), fixed([1, 3, 0, 2])), {"axis": -1, "inv": True},
               label="axis-1-inv"),
    ],
    # reductions
    "sum": _reductions(normal),
    "mean": _reductions(normal),
    "max": _reductions(distinct),
    "min": _reductions(distinct),
    "prod": _reductions(_signed) + [
        OpCase((fixed([[0.0, 0.5, -1.5], [1.2, 0.7, -0.8]]),), {"axis": 1},
               label="one-zero"),
        OpCase((fixed([[0.0, 0.5, 0.0], [1.2, 0.0, -0.8]]),), {"axis": 1},
               label="two-zeros-in-a-row"),
        OpCase((fixed([[0.0, 0.5, 0.0], [1.2, 0.0, -0.8]]),), label="three-zeros-all",
               options=_FLAT),
    ],
    "prod_others": [
        OpCase((_signed(3, 4),), label="all"),
        OpCase((_signed(2, 3, 4),), {"axis": (0, 2)}, label="axes02"),
        OpCase((fixed([[0.0, 0.5, -1.5, 2.0], [1.2, 0.0, -0.8, 0.0]]),), {"axis": 1},
               label="zeros"),
    ],
    # cumulative
    "cumsum": [OpCase((normal(3, 4),), label="flattened"),
               OpCase((normal(2, 3, 4),), {"axis": 1}, label="axis1"),
               OpCase((normal(2, 3),), {"axis": -1}, label="axis-1")],
    "cumprod": [OpCase((_signed(3, 4),), label="flattened"),
                OpCase((_signed(2, 3, 4),), {"axis": 1}, label="axis1"),
                OpCase((fixed([[0.0, 0.5, -1.5], [1.2, 0.0, 0.0]]),), {"axis": -1},
                       label="zeros")],
    "cumprodsum": [OpCase((_signed(2, 3), normal(3, 3)), {"axis": 0}, label="axis0"),
                   OpCase((_signed(2, 2, 4), normal(2, 3, 4)), {"axis": 1}, label="axis1")],
    # linear algebra
    "matmul": [OpCase((normal(3, 4), normal(4, 2)), label="2d"),
               OpCase((normal(2, 3, 4), normal(2, 4, 5)), label="batched"),
               OpCase((normal(2, 1, 3, 4), normal(3, 4, 2)), label="batch-broadcast")],
    "linear": [OpCase((normal(3, 4), normal(5, 4), normal(5)), label="bias"),
               OpCase((normal(3, 4), normal(5, 4)), label="no-bias"),
               OpCase((normal(2, 3, 4), normal(5, 4), normal(5)), label="3d-x"),
               OpCase((normal(4), normal(5, 4)), label="1d-x-no-bias")],
    "einsum": [OpCase((normal(2, 3), normal(3, 4)), {"in_subs": "ij,jk", "out_sub": "ik"},
                      label="matmul"),
               OpCase((normal(3, 3),), {"in_subs": "ii", "out_sub": "i"}, label="diagonal"),
               OpCase((normal(2, 3, 4), normal(3, 4, 2)),
                      {"in_subs": "i@,@i", "out_sub": "@"}, label="ellipsis"),
               OpCase((normal(3), normal(2, 3), normal(3)),
                      {"in_subs": "i,ji,i", "out_sub": "j"}, label="three")],
    "diag_einsum": [OpCase((normal(3),), {"in_subs": "i", "out_sub": "ii", "out_shape": (3, 3)},
                           label="onto-diagonal"),
                    OpCase((normal(3),), {"in_subs": "i", "out_sub": "ij", "out_shape": (3, 4)},
                           label="new-axis"),
                    OpCase((normal(2, 3), normal(3)),
                           {"in_subs": "@i,i", "out_sub": "i", "out_shape": (3,)},
                           label="ellipsis-summed")],
    "inv": [OpCase((lambda rng: np.eye(3) + 0.3 * rng.standard_normal((3, 3)),), label="2d"),
            OpCase((lambda rng: np.eye(2) + 0.3 * rng.standard_normal((4, 2, 2)),),
                   label="batch")],
    "det": [OpCase((lambda rng: np.eye(3) + 0.3 * rng.standard_normal((3, 3)),), label="2d"),
            OpCase((lambda rng: np.eye(2) + 0.3 * rng.standard_normal((4, 2, 2)),),
                   label="batch")],
    "coo_matmul": [
        OpCase((normal(4), normal(3, 2)), {"sp_row": _COO_ROW, "sp_col": _COO_COL,
                                           "sp_shape": (2, 3)}, label="sparse-dense"),
        OpCase((normal(4), normal(4, 2)), {"sp_row": _COO_ROW, "sp_col": _COO_COL,
                                           "sp_shape": (2, 3), "transa": True,
                                           "transb": True, "transc": True},
               label="transposed"),
        OpCase((normal(2, 4), normal(2, 3, 2)),
               {"sp_row": _COO_BATCH_ROW, "sp_col": _COO_BATCH_COL, "sp_shape": (2, 3)},
               label="batch-padded"),
    ],
    "coo_matmul_grad_sp": [
        OpCase((normal(2, 5), normal(5, 3)), {"sp_row": _COO_ROW, "sp_col": _COO_COL,
                                              "sp_shape": (2, 3)}, label="2d"),
        OpCase((normal(2, 5, 2), normal(2, 3, 5)),
               {"sp_row": _COO_BATCH_ROW, "sp_col": _COO_BATCH_COL, "sp_shape": (2, 3),
                "transa": True, "transb": True}, label="batch-transposed"),
    ],
    # embeddings
    "embed_id": [
        OpCase((fixed([[0, 2, 0], [4, 2, 1]]), normal(5, 3)), label="repeated-ids"),
        OpCase((fixed([[0, -1, 2], [2, 2, -1]]), normal(5, 3)), {"ignore_label": -1},
               label="ignore-label"),
    ],
    "embed_id_grad": [
        OpCase((fixed([[0, 2, 0], [4, 2, 1]]), normal(2, 3, 3)), {"vocabulary": 5},
               label="repeated-ids"),
        OpCase((fixed([0, -1, 2, 2]), normal(4, 3)), {"vocabulary": 4, "ignore_label": -1},
               label="ignore-label"),
    ],
    # losses
    "softmax": _softmax_like(),
    "log_softmax": _softmax_like(),
    "softmax_cross_entropy": [
        OpCase((normal(4, 3), ints(4, high=3)), label="mean"),
        OpCase((normal(4, 3), fixed([0, -1, 2, 2])), label="ignore-label"),
        OpCase((normal(4, 3), fixed([0, -1, 2, 1])), {"normalize": False},
               label="not-normalized"),
        OpCase((normal(4, 3), fixed([1, -1, 2, 0])), {"reduce": "no"}, label="reduce-no"),
        OpCase((normal(4, 3), fixed([1, 2, 0, 1])), {"ignore_label": 2},
               label="ignore-label-2"),
        OpCase((normal(4, 3), fixed([1, -1, 2, 0])), {"class_weight": [0.5, 2.0, 1.5]},
               label="class-weight"),
        OpCase((normal(2, 3, 2, 2), fixed([[[0, 2], [1, -1]], [[2, 2], [0, 1]]])),
               label="nchw"),
        OpCase((normal(2, 3, 4), fixed([[0, 2, 1, -1], [2, 2, 0, 1]])),
               {"reduce": "no", "class_weight": np.array([1.0, 0.25, 3.0])},
               label="ncl-reduce-no-class-weight"),
        OpCase((normal(2, 3, 4), fixed([[0, 2, 1, -1], [2, 2, 0, 1]])),
               {"cache_score": False}, label="ncl-no-cache"),
    ],
    "sigmoid_cross_entropy": [
        OpCase((normal(3, 4), ints(3, 4, high=2)), label="mean"),
        OpCase((normal(3, 4), fixed([[0, 1, -1, 1], [1, -1, 0, 0], [1, 1, 0, -1]])),
               label="ignore-label"),
        OpCase((normal(3, 4), fixed([[0, 1, -1, 1], [1, -1, 0, 0], [1, 1, 0, -1]])),
               {"normalize": False}, label="not-normalized"),
        OpCase((normal(3, 4), fixed([[0, 1, -1, 1], [1, -1, 0, 0], [1, 1, 0, -1]])),
               {"reduce": "no"}, label="reduce-no"),
    ],
    "mean_squared_error": [OpCase((normal(3, 4), normal(3, 4)))],
    "mean_absolute_error": [OpCase((normal(3, 4), normal(3, 4)))],
    "connectionist_temporal_classification": [
        OpCase((fixed([4, 4]), fixed([2, 2]), fixed([[0, 1], [1, 1]]), normal(4, 2, 3)),
               {"blank_symbol": 2}, label="mean"),
        OpCase((fixed([3, 5]), fixed([1, 2]), fixed([[1, 0], [0, 1]]), normal(5, 2, 3)),
               {"blank_symbol": 2, "reduce": "no"}, label="padded-reduce-no"),
    ],
    # noise
    "dropout": [OpCase((normal(3, 4),), {"ratio": 0.5, "mask": _DROPOUT_MASK})],
    "zoneout": [OpCase((normal(3, 4), normal(3, 4)), {"ratio": 0.5,
                                                      "flag_x": _DROPOUT_MASK > 0})],
    "simplified_dropconnect": [
        OpCase((normal(3, 4), normal(2, 4), normal(2)),
               {"ratio": 0.5, "mask": np.arange(24).reshape(3, 2, 4) % 3 > 0},
               label="batchwise-bias"),
        OpCase((normal(3, 2, 2), normal(2, 4)),
               {"ratio": 0.25, "mask": np.arange(8).reshape(2, 4) % 3 > 0,
                "use_batchwise_mask": False}, label="shared-mask-no-bias"),
    ],
    # padding
    "pad": [OpCase((normal(2, 3),), {"pad_width": ((1, 2), (0, 1))}, label="per-axis"),
            OpCase((normal(2, 3),), {"pad_width": 1, "constant_values": 2.5},
                   label="value")],
    "pad_sequence": [
        OpCase((normal(3, 2), normal(1, 2), normal(2, 2)), label="longest"),
        OpCase((normal(2), normal(3)), {"length": 5, "padding": -1.0}, label="length"),
    ],
    # sequence models and transformers
    "swapaxes": [OpCase((normal(2, 3, 4),), {"axis1": 0, "axis2": 2}, label="0-2"),
                 OpCase((normal(2, 3, 4),), {"axis1": -1, "axis2": 1}, label="negative")],
    "copy": [OpCase((normal(3, 4),))],
    "transpose_sequence": [
        OpCase((normal(4, 3), normal(2, 3), normal(2, 3), normal(1, 3)), label="ragged"),
        OpCase((normal(3, 2, 2), normal(3, 2, 2)), label="equal-lengths"),
    ],
    "layer_normalization": [
        OpCase((normal(4, 5), normal(5), normal(5)), label="2d"),
        OpCase((normal(2, 3, 4), normal(4), normal(4)), {"eps": 1e-3}, label="3d-eps"),
    ],
    "lstm": [OpCase((normal(3, 2), normal(3, 8)), label="2d"),
             OpCase((normal(2, 2, 3), normal(2, 8, 3)), label="3d"),
             OpCase((normal(4, 2), normal(3, 8)), label="carried-rows")],
    "lstm_grad": [
        OpCase((normal(3, 2), normal(3, 8), normal(3, 2), normal(3, 2), normal(3, 2)),
               label="2d"),
        OpCase((normal(3, 2, 2), normal(2, 8, 2), normal(3, 2, 2), normal(3, 2, 2),
                normal(2, 2, 2)), label="carried-rows"),
    ],
    "slstm": [OpCase((normal(3, 2), normal(3, 2), normal(3, 8), normal(3, 8)), label="2d"),
              OpCase((normal(2, 2, 3), normal(2, 2, 3), normal(2, 8, 3), normal(2, 8, 3)),
                     label="3d")],
    "slstm_grad": [
        OpCase((normal(3, 2), normal(3, 2), normal(3, 8), normal(3, 8), normal(3, 2),
                normal(3, 2), normal(3, 2)), label="2d"),
    ],
    "attention": [
        OpCase((normal(2, 3, 4), normal(2, 5, 4), normal(2, 5, 2)), label="no-mask"),
        OpCase((normal(2, 2, 3, 4), normal(2, 2, 3, 4), normal(2, 2, 3, 4)), {"scale": 0.7},
               label="heads-scale"),
        OpCase((normal(2, 3, 4), normal(2, 4, 4), normal(2, 4, 3),
                fixed([[[True, True, False, False]], [[True, True, True, False]]])),
               label="padding-mask"),
        OpCase((normal(1, 3, 2), normal(1, 3, 2), normal(1, 3, 2),
                fixed([[True, False, False], [False, False, False], [True, True, True]])),
               label="row-fully-masked"),
    ],
    # convolution (filter gradients are ops too: second order goes through them)
    "convolution_2d": [
        OpCase((normal(2, 3, 5, 4), normal(4, 3, 3, 2), normal(4)), label="bias"),
        OpCase((normal(2, 2, 5, 6), normal(3, 2, 3, 3)), {"stride": 2, "pad": 1},
               label="stride-pad"),
        OpCase((normal(1, 2, 6, 5), normal(2, 2, 2, 2)), {"dilate": 2}, label="dilate"),
        OpCase((normal(2, 4, 4, 4), normal(6, 2, 3, 3), normal(6)), {"groups": 2},
               label="groups"),
        OpCase((normal(1, 2, 5, 5), normal(2, 2, 2, 2)), {"stride": 2, "cover_all": True},
               label="cover-all"),
        OpCase((normal(1, 2, 5, 6), normal(2, 2, 3, 2)), {"stride": (2, 1), "pad": (0, 2),
                                                          "dilate": (1, 2)},
               label="per-axis"),
    ],
    "convolution_1d": [
        OpCase((normal(2, 3, 7), normal(4, 3, 3), normal(4)), label="bias"),
        OpCase((normal(2, 4, 9), normal(4, 2, 3)),
               {"stride": 2, "pad": 2, "dilate": 2, "groups": 2}, label="all-options"),
    ],
    "convolution_2d_grad_w": [
        OpCase((normal(2, 3, 5, 4), normal(2, 4, 3, 3)), {"ksize": (3, 2)}, label="plain"),
        OpCase((normal(2, 4, 5, 5), normal(2, 6, 3, 3)),
               {"ksize": 3, "stride": 2, "pad": 1, "groups": 2}, label="stride-pad-groups"),
        OpCase((normal(1, 2, 5, 5), normal(1, 2, 3, 3)), {"ksize": 2, "stride": 2},
               label="cover-all"),
    ],
    "convolution_1d_grad_w": [
        OpCase((normal(2, 3, 7), normal(2, 4, 3)), {"ksize": 3, "dilate": 2}, label="dilate"),
    ],
    "deconvolution_2d": [
        OpCase((normal(2, 3, 3, 4), normal(3, 2, 3, 3), normal(2)), {"stride": 2, "pad": 1},
               label="stride-pad-bias"),
        OpCase((normal(1, 2, 3, 3), normal(2, 2, 2, 2)), {"stride": 2, "outsize": (7, 7)},
               label="outsize"),
        OpCase((normal(2, 4, 3, 3), normal(4, 1, 3, 3)), {"groups": 2}, label="groups"),
        OpCase((normal(1, 2, 3, 3), normal(2, 2, 2, 2)), {"dilate": 2}, label="dilate"),
    ],
    "deconvolution_1d": [
        OpCase((normal(2, 3, 4), normal(3, 2, 3), normal(2)), {"stride": 2}, label="stride"),
    ],
    "im2col": [
        OpCase((normal(2, 3, 5, 4),), {"ksize": (2, 3), "stride": (1, 2), "pad": 1},
               label="stride-pad"),
        OpCase((normal(1, 2, 6, 5),), {"ksize": 2, "stride": 2, "dilate": 2, "cover_all": True},
               label="dilate-cover-all"),
    ],
    "im2col_grad": [
        OpCase((normal(2, 18, 6, 2),), {"size": (5, 4), "ksize": (2, 3), "stride": (1, 2),
                                        "pad": 1}, label="stride-pad"),
    ],
    "local_convolution_2d": [
        OpCase((normal(2, 3, 4, 4), normal(2, 2, 2, 3, 3, 3), normal(2, 2, 2)), label="bias"),
        OpCase((normal(1, 2, 5, 4), normal(3, 2, 2, 2, 2, 3)), {"stride": (2, 1)},
               label="stride"),
    ],
    "shift": [
        OpCase((normal(2, 10, 4, 3),), label="3x3-remainder"),
        OpCase((normal(1, 5, 5, 4),), {"ksize": (1, 5), "dilate": 2}, label="1x5-dilate"),
    ],
    "convolution_nd": [
        OpCase((normal(2, 2, 4, 3, 3), normal(3, 2, 2, 2, 2), normal(3)), {"ndim": 3, "pad": 1},
               label="3d-bias-pad"),
        OpCase((normal(1, 4, 5, 4, 3), normal(2, 2, 2, 2, 1)),
               {"ndim": 3, "stride": (2, 1, 1), "dilate": (1, 2, 1), "groups": 2,
                "cover_all": True}, label="3d-stride-dilate-groups-cover-all"),
    ],
    "convolution_nd_grad_w": [
        OpCase((normal(2, 2, 4, 3, 3), normal(2, 3, 3, 2, 2)), {"ndim": 3, "ksize": 2},
               label="3d"),
    ],
    "deconvolution_nd": [
        OpCase((normal(2, 2, 3, 2, 2), normal(2, 2, 2, 2, 2), normal(2)),
               {"ndim": 3, "stride": 2, "pad": 1}, label="3d-stride-pad-bias"),
    ],
    # pooling (distinct values: no two elements of a window tie)
    "max_pooling_2d": [
        OpCase((distinct(2, 3, 5, 5),), {"ksize": 2}, label="cover-all"),
        OpCase((distinct(2, 2, 5, 6),), {"ksize": 3, "stride": 2, "pad": 1},
               label="overlapping-pad"),
        OpCase((distinct(1, 2, 5, 5),), {"ksize": 2, "cover_all": False}, label="no-cover-all"),
        OpCase((distinct(1, 2, 6, 5),), {"ksize": (3, 2), "stride": (1, 2)},
               label="per-axis"),
    ],
    "max_pooling_1d": [
        OpCase((distinct(2, 3, 7),), {"ksize": 3, "stride": 2}, label="overlapping"),
    ],
    "average_pooling_2d": [
        OpCase((normal(2, 3, 4, 6),), {"ksize": 2}, label="plain"),
        OpCase((normal(2, 2, 5, 5),), {"ksize": 3, "stride": 2, "pad": 1},
               label="overlapping-pad"),
    ],
    "average_pooling_1d": [
        OpCase((normal(2, 3, 7),), {"ksize": 3, "pad": 1}, label="pad-zeros"),
        OpCase((normal(2, 3, 7),), {"ksize": 3, "stride": 2, "pad": 1, "pad_value": None},
               label="pad-ignored"),
    ],
    "max_pooling_nd": [
        OpCase((distinct(2, 2, 4, 3, 5),), {"ksize": 2}, label="3d-cover-all"),
        OpCase((distinct(1, 2, 5, 4, 3),), {"ksize": (3, 2, 2), "stride": (2, 1, 2), "pad": 1,
                                           "cover_all": False}, label="3d-per-axis-pad"),
    ],
    "average_pooling_nd": [
        OpCase((normal(2, 2, 4, 3, 5),), {"ksize": 3, "stride": 2, "pad": 1},
               label="3d-pad-zeros"),
        OpCase((normal(1, 2, 5, 4, 3),), {"ksize": (3, 2, 2), "stride": (2, 1, 2), "pad": 1,
                                         "pad_value": None}, label="3d-pad-ignored"),
    ],
    "unpooling_nd": [
        OpCase((normal(2, 2, 3, 2, 2),), {"ksize": 2}, label="3d-cover-all"),
        OpCase((normal(1, 3, 3, 4),), {"ksize": 3, "stride": 2, "pad": 1, "cover_all": False},
               label="2d-overlapping-pad"),
        OpCase((normal(1, 2, 3),), {"ksize": 2, "outsize": (7,), "cover_all": False},
               label="1d-outsize"),
    ],
    "sum_pooling_nd": [
        OpCase((normal(2, 2, 5, 4),), {"ksize": 2, "cover_all": True}, label="2d-cover-all"),
        OpCase((normal(1, 2, 5, 3, 4),), {"ksize": 3, "stride": 2, "pad": 1},
               label="3d-overlapping-pad"),
    ],
    "decorrelated_batch_normalization": [
        OpCase((normal(6, 4),), {"groups": 2}, label="2d-2groups"),
        OpCase((normal(3, 3, 2, 2),), {"groups": 1, "eps": 0.1}, label="4d"),
    ],
    "local_response_normalization": [
        OpCase((normal(2, 7, 3, 2),), label="defaults"),
        OpCase((normal(2, 6, 3),), {"n": 3, "k": 1.0, "alpha": 0.5, "beta": 0.75},
               label="strong"),
    ],
    # evaluation: no gradient; tests/test_gradient_check.py checks it records nothing
    "accuracy": [
        OpCase((normal(5, 3), ints(5, high=3)), label="plain"),
        OpCase((normal(4, 3, 2), fixed([[0, 2], [-1, 1], [2, -1], [1, 1]])),
               {"ignore_label": -1}, label="ignore-label"),
    ],
}
