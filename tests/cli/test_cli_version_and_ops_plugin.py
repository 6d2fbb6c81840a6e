"""`graphtool --version`, and `graphtool ops --plugin FILE` listing a plugin's ops."""

import json
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.app import app
from graphcore import registry

runner = CliRunner()
EXAMPLE_PLUGIN = Path(__file__).resolve().parents[2] / "examples" / "swish_ops.py"

PLUGIN = '''
import graphcore


class Twice(graphcore.FunctionNode):
    """2 x, elementwise [a doc with brackets]."""
    arity = 1
    attributes = {"unused": graphcore.Attr(int, 0, doc="an attribute")}

    def __init__(self, unused=0):
        self.unused = unused

    def forward(self, inputs):
        return inputs[0] * 2,

    def backward(self, indexes, grad_outputs):
        return grad_outputs[0] * 2,


graphcore.register_op("twice_ops_plugin_test", Twice)
'''


@pytest.fixture
def plugin(tmp_path):
    path = tmp_path / "my_ops.py"
    path.write_text(PLUGIN)
    yield path
    registry._ops.pop("twice_ops_plugin_test", None)


def test_version_prints_the_package_version():
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout == f"graphtool {metadata.version('graphtool')}\n"
    done = subprocess.run([sys.executable, "-m", "cli", "--version"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == result.stdout and not done.stderr


def test_ops_lists_the_ops_a_plugin_registers(plugin):
    without = runner.invoke(app, ["ops", "--json"])
    assert "twice_ops_plugin_test" not in without.stdout
    result = runner.invoke(app, ["ops", "--plugin", str(plugin), "--json"])
    assert result.exit_code == 0, result.stderr
    entries = {e["name"]: e for e in json.loads(result.stdout)["ops"]}
    twice = entries["twice_ops_plugin_test"]
    assert twice["plugin"] == str(plugin) and twice["kind"] == "op"
    assert [a["name"] for a in twice["attributes"]] == ["unused"]
    assert "plugin" not in entries["relu"]
    table = runner.invoke(app, ["ops", "--plugin", str(plugin)])
    assert table.exit_code == 0, table.stderr
    line = next(ln for ln in table.stdout.splitlines() if "twice_ops_plugin_test" in ln)
    assert str(plugin.name) in line and "unused=0" in line


def test_ops_with_a_missing_or_broken_plugin_says_so(tmp_path):
    missing = runner.invoke(app, ["ops", "--plugin", str(tmp_path / "nope.py")])
    assert missing.exit_code == 66 and "nope.py" in missing.stderr
    broken = tmp_path / "broken.py"
    broken.write_text("raise ValueError('boom')\n")
    result = runner.invoke(app, ["ops", "--plugin", str(broken)])
    assert result.exit_code == 1 and "boom" in result.stderr
    assert "Traceback" not in result.stderr


def test_the_readme_plugin_command_runs_from_a_scratch_folder(tmp_path):
    shutil.copytree(EXAMPLE_PLUGIN.parent, tmp_path / "examples")
    done = subprocess.run([sys.executable, "-m", "cli", "ops", "--plugin",
                           "examples/swish_ops.py", "--json"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    swish = [e for e in json.loads(done.stdout)["ops"] if e["name"] == "swish"]
    assert swish and swish[0]["plugin"] == "examples/swish_ops.py"
