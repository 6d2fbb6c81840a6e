"""The 12-point train sweep of README's "Sweeps": `graphtool sweep --workers 2` (wall clock of
the whole command: cluster start, 12 points, files) against the same 12 points run one after
another, counted two ways: in this process, one `run_point` after another (compute only, no
process start: the strict baseline), and as a shell loop of `graphtool train` (one process
each). Also `graphtool sweep --workers 1`.

    python benchmarks/sweep_speedup.py [--steps 3000]
"""

from __future__ import annotations

import argparse
import itertools
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SPEC = Path(__file__).resolve().parents[1] / "specs" / "residual_mlp.yaml"
WIDTHS = ("8", "16", "32")
RATES = ("1e-3", "3e-3", "1e-2", "3e-2")
GRAPHTOOL = [sys.executable, "-m", "cli"]


def timed(command: list[str], cwd: str) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3000)
    steps = str(parser.parse_args().steps)
    grid = ["--grid", f"params.width={','.join(WIDTHS)}", "--grid",
            f"train.lr={','.join(RATES)}", "--grid", f"train.steps={steps}"]
    from graphcore.commands.sweep import make_tasks, run_point
    from graphcore.spec import load_spec_file

    points = [{"params.width": w, "train.lr": lr, "train.steps": steps}
              for w, lr in itertools.product(WIDTHS, RATES)]
    tasks = make_tasks("train", str(SPEC), SPEC.read_text(), load_spec_file(SPEC), points)
    start = time.perf_counter()
    assert all(run_point(task)["status"] == "ok" for task in tasks)
    in_process = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as scratch:
        one_by_one = sum(timed([*GRAPHTOOL, "train", str(SPEC), "--steps", steps, "--lr", lr,
                                "--set", f"params.width={width}", "-q"], scratch)
                         for width, lr in itertools.product(WIDTHS, RATES))
        two = timed([*GRAPHTOOL, "sweep", str(SPEC), *grid, "--workers", "2", "-q"], scratch)
        one = timed([*GRAPHTOOL, "sweep", str(SPEC), *grid, "--workers", "1", "-q"], scratch)
    print(f"12 points, {steps} steps each: one after another in one process "
          f"{in_process:.1f} s, as `graphtool train` processes {one_by_one:.1f} s; "
          f"sweep --workers 2 {two:.1f} s ({two / in_process:.2f}x / {two / one_by_one:.2f}x); "
          f"sweep --workers 1 {one:.1f} s")


if __name__ == "__main__":
    main()
