"""Sweeps given hostile sizes, without a cluster: a grid's size is bounded from its axes
before anything is expanded, and --random draws distinct points in linear time (and all of a
grid smaller than K). Every refusal happens before a cluster is asked for, so these CLI runs
point at a closed port they never reach."""

import time

import pytest
from sweep_helpers import SPEC, invoke

from graphcore.sweep import (
    MAX_POINTS,
    SweepOptionError,
    expand_grid,
    grid_size,
    parse_grid,
    sample_grid,
)

CLOSED = "tcp://127.0.0.1:1"  # nothing listens there; a refusal comes before connecting


def _values(count):
    return ",".join(str(i) for i in range(count))


def test_a_grid_over_the_point_limit_is_refused_before_it_is_expanded():
    just_over = parse_grid([f"params.a={_values(101)}", f"params.b={_values(100)}"], "train")
    assert grid_size(just_over) == 10_100 > MAX_POINTS
    with pytest.raises(SweepOptionError, match=r"makes 10,100 points \(101 \(params.a\) x "
                                               r"100 \(params.b\)\), over the limit of 10,000"):
        expand_grid(just_over)
    huge = parse_grid([f"params.{k}={_values(10_000)}" for k in "abc"], "train")
    start = time.perf_counter()
    with pytest.raises(SweepOptionError, match="makes 1,000,000,000,000 points"):
        expand_grid(huge)
    assert time.perf_counter() - start < 0.5
    assert len(expand_grid(parse_grid([f"params.a={_values(100)}",
                                       f"params.b={_values(100)}"], "train"))) == MAX_POINTS


def test_the_cli_refuses_a_grid_over_the_limit_before_anything_runs(tmp_path):
    result = invoke("sweep", SPEC, "--grid", f"params.width={_values(101)}", "--grid",
                    f"seed={_values(100)}", "--scheduler", CLOSED, "--out-dir", tmp_path / "o")
    assert result.exit_code == 2, result.stderr
    assert "makes 10,100 points" in result.stderr and "--random K" in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "o").exists()


def test_random_draws_k_distinct_points_in_linear_time():
    """Over a million-point grid, 10,000 draws repeat about 50 points: each is drawn anew,
    against a set of the points so far, not a scan of them."""
    axes = parse_grid([f"params.{k}={_values(100)}" for k in "abc"], "train")
    start = time.perf_counter()
    points = sample_grid(axes, MAX_POINTS, seed=1)
    assert time.perf_counter() - start < 3
    assert len(points) == MAX_POINTS
    assert len({tuple(p.values()) for p in points}) == MAX_POINTS
    assert points == sample_grid(axes, MAX_POINTS, seed=1) != sample_grid(axes, MAX_POINTS,
                                                                           seed=2)
    ranges = parse_grid(["train.lr=1e-4:1e-1", "train.steps=1:3"], "train")
    points = sample_grid(ranges, 5000, seed=0)
    assert len({tuple(p.values()) for p in points}) == 5000


def test_random_k_over_the_grid_s_size_takes_every_point_in_grid_order():
    axes = parse_grid(["params.width=8,16", "train.steps=1:3"], "train")
    assert grid_size(axes) == 6
    every = sample_grid(axes, 10, seed=4)
    assert every == [{"params.width": w, "train.steps": s} for w in ("8", "16")
                     for s in ("1", "2", "3")]
    assert sample_grid(axes, 6, seed=4) == every
    five = sample_grid(axes, 5, seed=4)
    assert len(five) == 5 and all(p in every for p in five)
    assert len({tuple(p.values()) for p in five}) == 5
    assert grid_size(parse_grid(["train.lr=1e-3:1e-2"], "train")) is None


def test_random_over_the_point_limit_is_refused(tmp_path):
    with pytest.raises(SweepOptionError, match="--random 10,001 is over the limit"):
        sample_grid(parse_grid(["train.lr=1e-4:1e-1"], "train"), MAX_POINTS + 1)
    result = invoke("sweep", SPEC, "--grid", "train.lr=1e-4:1e-1", "--random",
                    MAX_POINTS + 1, "--scheduler", CLOSED, "--out-dir", tmp_path / "o")
    assert result.exit_code == 2 and "over the limit of 10,000" in result.stderr, result.stderr
