"""Peak memory of the sweep process (client and, for a local cluster, the scheduler) for a
20-point sweep over a 20 MB input file: `graphtool sweep --command run --grid seed=0,...,19
--workers 2` of a spec whose `file:` input is a 20 MB .npy (500,000 x 10 float32).

The sweep runs in a child process, which reports its own peak resident set (``VmHWM`` of
``/proc/self/status``: the child's own memory, the workers not counted; ``ru_maxrss`` would
start from the parent's peak, which Linux carries over an exec) and that of the same child
before the sweep started (imports done), so the difference is what the sweep costs.

    python benchmarks/sweep_memory.py [--points 20] [--rows 500000] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

SPEC = """graphtool: 1
name: sweep_memory
seed: 0
inputs:
  x: {{file: big.npy, shape: [{rows}, 10]}}
graph:
  - {{op: linear, out_size: 4, name: l1}}
loss: {{op: sum}}
"""

# The child: graphtool's CLI in this process, then its peak RSS (KiB) as JSON.
CHILD = """
import json, sys
import cli.commands.sweep  # noqa: F401  (imports counted in the baseline)
import distributed  # noqa: F401
from cli.app import app

def peak_kib():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))

before = peak_kib()
code = 0
try:
    app(sys.argv[1:])
except SystemExit as stop:
    code = stop.code
print(json.dumps({"exit_code": code, "baseline_kib": before, "peak_kib": peak_kib()}))
"""


def write_input(path: Path, rows: int) -> None:
    """``rows`` x 10 float32 normal values as an .npy, written a block at a time (this
    process stays small)."""
    rng = np.random.default_rng(0)
    with open(path, "wb") as handle:
        np.lib.format.write_array_header_1_0(
            handle, {"descr": "<f4", "fortran_order": False, "shape": (rows, 10)})
        for start in range(0, rows, 100_000):
            count = min(100_000, rows - start)
            handle.write(rng.normal(size=(count, 10)).astype("<f4").tobytes())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=20)
    parser.add_argument("--rows", type=int, default=500_000)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        write_input(folder / "big.npy", args.rows)
        (folder / "spec.yaml").write_text(SPEC.format(rows=args.rows))
        size = (folder / "big.npy").stat().st_size
        seeds = ",".join(str(i) for i in range(args.points))
        command = [sys.executable, "-c", CHILD, "sweep", str(folder / "spec.yaml"),
                   "--command", "run", "--grid", f"seed={seeds}", "--workers",
                   str(args.workers), "--out-dir", str(folder / "out"), "-q"]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            sys.exit(f"the sweep failed ({done.returncode}):\n{done.stderr}")
        report = json.loads(done.stdout.strip().splitlines()[-1])
        if report["exit_code"] not in (0, None):
            sys.exit(f"the sweep exited {report['exit_code']}:\n{done.stderr}")
        rows = json.loads((folder / "out" / "sweep_memory" / "sweep.json").read_text())["rows"]
    ok = sum(r["status"] == "ok" for r in rows)
    print(f"{args.points}-point sweep over a {size / 1e6:.1f} MB input, {args.workers} workers "
          f"({ok} points ok): sweep process peak RSS {report['peak_kib'] / 1024:.0f} MiB "
          f"({report['baseline_kib'] / 1024:.0f} MiB before the sweep started)")


if __name__ == "__main__":
    main()
