"""`graphtool bench --train` beside `graphtool train`'s own epochs: does the step benchmark
predict training? For each spec, `ROUNDS` times in turn: `graphtool bench SPEC --train --json`
(every mode x batching that applies), then `graphtool train SPEC --json` per mode x batching,
and once per mode without `--batching` (the measured choice). Each figure is the median over
the rounds: bench's `epoch s` (an epoch's steps at the mean step time plus one validation
pass) and ms per step, train's seconds per epoch (the difference of its `elapsed_time`
between epochs; the first epoch apart, as it holds the first traces and, without
`--batching`, the measurement). Prints a Markdown table.

    python benchmarks/train_steps.py                 # 3 rounds, a few minutes
    python benchmarks/train_steps.py --rounds 1
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPECS = {  # spec -> (train epochs, bench --repeat: None for one epoch's steps)
    "specs/digits_mlp.yaml": (6, None),
    "specs/waves_rnn.yaml": (8, 12),
}
ROUNDS = 3


def graphtool(*args: str) -> dict:
    done = subprocess.run([sys.executable, "-m", "cli", *args, "--json", "-q"], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def per_epoch(log: list[dict]) -> tuple[float, float]:
    """Seconds of the first epoch, and the median of the later ones."""
    times = [e["elapsed_time"] for e in log]
    later = [b - a for a, b in zip(times, times[1:], strict=False)]
    return times[0], statistics.median(later)


def measure(spec: str, epochs: int, repeat: int | None, rounds: int, out: str) -> list[dict]:
    rows: dict[tuple, dict] = {}
    for _ in range(rounds):
        extra = [] if repeat is None else ["--repeat", str(repeat)]
        for r in graphtool("bench", spec, "--train", "--out-dir", out, *extra)["results"]:
            row = rows.setdefault((r["mode"], r["batching"]), {"bench": [], "step": [],
                                                               "first": [], "train": [],
                                                               "chosen": []})
            row["bench"].append(r["epoch_s"])
            row["step"].append(r["median_ms"])
        for mode, batching in [key for key in rows if key[1] != "measured"]:
            asked = [] if batching is None else ["--batching", batching]
            doc = graphtool("train", spec, "--mode", mode, "--epochs", str(epochs), *asked,
                            "--out-dir", out)
            first, later = per_epoch(doc["log"])
            rows[(mode, batching)]["first"].append(first)
            rows[(mode, batching)]["train"].append(later)
        for mode in dict.fromkeys(m for m, b in rows if b not in (None, "measured")):
            doc = graphtool("train", spec, "--mode", mode, "--epochs", str(epochs),
                            "--out-dir", out)
            first, later = per_epoch(doc["log"])
            row = rows.setdefault((mode, "measured"), {"bench": [], "step": [], "first": [],
                                                       "train": [], "chosen": []})
            row["first"].append(first)
            row["train"].append(later)
            row["chosen"].append(doc["batching"]["used"])
    return [{"spec": Path(spec).stem, "mode": mode, "batching": batching, **values}
            for (mode, batching), values in rows.items()]


def table(rows: list[dict]) -> str:
    def med(values: list[float], fmt: str) -> str:
        return format(statistics.median(values), fmt) if values else "-"

    lines = ["| spec | mode | batching | bench --train ms/step | bench --train epoch s | "
             "train epoch s (epochs 2+) | train epoch 1 s |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        batching = r["batching"] or "-"
        if batching == "measured":
            batching = "none given: " + "/".join(dict.fromkeys(r["chosen"]))
        lines.append(f"| {r['spec']} | {r['mode']} | {batching} | {med(r['step'], '.2f')} | "
                     f"{med(r['bench'], '.3f')} | {med(r['train'], '.3f')} | "
                     f"{med(r['first'], '.2f')} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as out:
        rows = [row for spec, (epochs, repeat) in SPECS.items()
                for row in measure(spec, epochs, repeat, args.rounds, out)]
    print(table(rows))


if __name__ == "__main__":
    main()
