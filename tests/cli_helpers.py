"""Running ``graphtool`` from a test: in-process through typer's ``CliRunner`` (fast: no
interpreter start, no import of ``cli.app``), or as a real process where the test is about what
only a process shows (signals, pipes, exit codes set by the interpreter, memory caps).

- ``invoke(*argv, input=None, env=None)``: the ``Result`` of ``graphtool ARGV`` in-process; every
  argument goes through ``str()`` (paths, numbers). ``result.stdout`` and ``result.stderr`` are
  kept apart.
- ``invoke_ok(*argv)``: the same, asserting exit 0 and no traceback.
- ``invoke_json(*argv)``: the parsed stdout of a successful ``graphtool ARGV`` (``--json`` is the
  caller's to pass).
- ``graphtool_process(*argv, cwd, env=None, timeout=120)``: a real ``python -m cli ARGV`` that
  ran to its end (a ``CompletedProcess``, text); the repository is put on ``PYTHONPATH``.
- ``graphtool_popen(*argv, cwd, **kwargs)``: the same started and left running (a ``Popen``,
  text pipes), for a test that interrupts it.
- ``quick_first(values)``: parametrize values whose repeats are ``slow``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.app import app

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()


def invoke(*argv, input=None, env=None):
    return runner.invoke(app, [str(a) for a in argv], input=input, env=env)


def invoke_ok(*argv, input=None):
    result = invoke(*argv, input=input)
    assert result.exit_code == 0, (result.exit_code, result.stderr[-2000:])
    assert "Traceback" not in result.stderr
    return result


def invoke_json(*argv, input=None):
    return json.loads(invoke_ok(*argv, input=input).stdout)


def process_env(env: dict | None = None) -> dict:
    return dict(os.environ if env is None else env, PYTHONPATH=str(ROOT))


def graphtool_process(*argv, cwd: Path, env: dict | None = None, timeout: float = 120,
                      input: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cli", *map(str, argv)], cwd=cwd,
                          env=process_env(env), capture_output=True, text=True,
                          timeout=timeout, input=input,
                          stdin=subprocess.DEVNULL if input is None else None)


def graphtool_popen(*argv, cwd: Path, env: dict | None = None, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "cli", *map(str, argv)], cwd=cwd,
                            env=process_env(env), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kwargs)


def quick_first(values) -> list:
    """``values`` for ``parametrize``, all but the first marked ``slow``: a behaviour that a
    real process shows alike for every value is tried once in ``pytest -m "not slow"``, and
    for every value in the full run. A tuple is one value per argument name."""
    def param(value, marks=()):
        return pytest.param(*value, marks=marks) if isinstance(value, tuple) else \
            pytest.param(value, marks=marks)
    return [param(value, () if i == 0 else pytest.mark.slow) for i, value in enumerate(values)]
