"""The installed `graphtool` command in real shell pipelines (subprocesses): what the README's
"Use it in a pipeline" lines print (tests/test_readme_commands.py runs every README line)."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def pipeline_lines() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("### Use it in a pipeline", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, flags=re.S).group(1)
    return [line for line in block.splitlines() if line.strip()]


@pytest.fixture
def workdir(tmp_path):
    shutil.copytree(ROOT / "specs", tmp_path / "specs")
    (tmp_path / "outputs").mkdir()
    return tmp_path


def shell(command: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.pop("NO_COLOR", None)
    return subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_readme_has_pipeline_examples():
    assert len(pipeline_lines()) >= 4


@pytest.mark.slow  # a pipeline of graphtool processes
def test_pipeline_outputs_are_data(workdir):
    lines = pipeline_lines()
    assert float(shell(lines[0], workdir).stdout)  # the loss, a number
    assert shell(lines[1], workdir).stdout.strip() == "seed_static"
    assert shell(lines[2], workdir).stdout.strip() == "[3, 2]"


@pytest.mark.slow  # a process; test_cli_process's quick cases show the same
def test_head_closing_the_pipe_is_quiet(workdir):
    done = shell("graphtool ops | head -n 1", workdir)
    assert done.returncode in (0, 141)  # 141 when head left some of the table unread
    assert done.stdout.startswith("name") and done.stderr == ""


@pytest.mark.slow  # a process; test_cli_process's quick cases show the same
def test_python_dash_m_cli_works(workdir):
    done = subprocess.run([sys.executable, "-m", "cli", "run", "specs/seed_static.yaml",
                           "--json", "-q"], cwd=workdir, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["spec"] == "seed_static"


@pytest.mark.slow  # a process; test_cli_process's quick cases show the same
def test_a_reader_that_exits_early_causes_no_broken_pipe_error(workdir):
    # `true` exits before graphtool (slower to start) writes, so every write hits a closed pipe
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    done = subprocess.run(["bash", "-c", "graphtool ops --json | true; echo ${PIPESTATUS[0]}"],
                          cwd=workdir, env=env, capture_output=True, text=True, timeout=120)
    assert "BrokenPipe" not in done.stderr and "Traceback" not in done.stderr
    assert done.stdout.strip() in ("0", "141")


@pytest.mark.slow  # a process; test_cli_process's quick cases show the same
def test_rich_output_cut_short_by_head_is_quiet(workdir):
    done = shell("graphtool train specs/residual_mlp.yaml --steps 5 | head -n 1", workdir)
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr
