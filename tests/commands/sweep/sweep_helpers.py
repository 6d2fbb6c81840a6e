"""What the sweep tests share: invoking the CLI, reading sweep.json, and running a row's
point alone with the command line the sweep prints for it."""

import json
import shlex
from pathlib import Path

from cli_helpers import invoke

SPECS = Path(__file__).resolve().parents[3] / "specs"
SPEC = SPECS / "residual_mlp.yaml"


def sweep_rows(out_dir, name="residual_mlp"):
    return json.loads((Path(out_dir) / name / "sweep.json").read_text())["rows"]


def alone(row, out_dir, extra=()):
    """``graphtool <command> ... --json`` for ``row``'s point, run by itself, as a document."""
    from graphcore.commands.sweep import command_line

    words = shlex.split(command_line(row, str(SPEC)))[1:]
    result = invoke(*words, *extra, "--json", "--out-dir", out_dir)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def assert_train_rows_equal_alone(rows, out_dir):
    """Every ok row's final loss is the one `graphtool train` gives for its point alone."""
    for row in rows:
        assert row["status"] == "ok", row
        doc = alone(row, out_dir)
        assert row["figures"]["final_loss"] == doc["final_loss"], row
