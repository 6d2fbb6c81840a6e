"""A forking server for hostile-input tests: one process under a memory cap (``RLIMIT_AS``)
imports graphtool once and forks a fresh child per command, so every command is a real
process (its own cwd, file descriptors, signal handlers, exit code and peak RSS) without
paying the import each time."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Each job line: {"argv", "cwd", "stdin", "out", "err"} runs `graphtool ARGV` in a forked child
# and answers [exit code or "timeout" or -signal, peak RSS in bytes]; {"warm": true, "argv",
# "cwd"} runs it in the server itself (output discarded) and answers [0, 0].
SERVER = r"""
import json, os, signal, sys
sys.path.insert(0, sys.argv[1])
import importlib
from cli.app import COMMANDS
from cli.entry import main
for name in COMMANDS:  # what the commands load, imported once here rather than in each child
    importlib.import_module("cli.commands." + name)
limit = int(sys.argv[2])
for line in sys.stdin:
    job = json.loads(line)
    if job.get("warm"):  # run once here, so each child starts with what commands load
        os.chdir(job["cwd"])
        saved = os.dup(1), os.dup(2)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        sys.argv = ["graphtool", *job["argv"]]
        try:
            main()
        except SystemExit:
            pass
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
        print(json.dumps([0, 0]), flush=True)
        continue
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            signal.alarm(limit)
            os.chdir(job["cwd"])
            fd = os.open(job["stdin"], os.O_RDONLY)
            os.dup2(fd, 0)
            for target, name in ((1, "out"), (2, "err")):
                fd = os.open(job[name], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                os.dup2(fd, target)
            sys.argv = ["graphtool", *job["argv"]]
            try:
                main()
                code = 0
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)
    _, status, usage = os.wait4(pid, 0)
    if os.WIFSIGNALED(status):
        result = "timeout" if os.WTERMSIG(status) == signal.SIGALRM else -os.WTERMSIG(status)
    else:
        result = os.WEXITSTATUS(status)
    print(json.dumps([result, usage.ru_maxrss * 1024]), flush=True)
"""


class CappedServer:
    """``run(argv, cwd, stdin)`` -> (exit code or "timeout" or -signal, peak RSS in bytes,
    stdout, stderr); the child's stdin, stdout and stderr are files in a folder of ``scratch``
    (never in ``cwd``, whose contents the tests check)."""

    def __init__(self, scratch: Path, memory_cap: int, time_limit_s: int) -> None:
        self.scratch = scratch
        env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
               "MKL_NUM_THREADS": "1", "NO_COLOR": "1", "COLUMNS": "100"}

        def cap_memory() -> None:
            resource.setrlimit(resource.RLIMIT_AS, (memory_cap, memory_cap))

        self.process = subprocess.Popen(
            [sys.executable, "-c", SERVER, str(ROOT), str(time_limit_s)], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True, env=env, preexec_fn=cap_memory)

    def _ask(self, job: dict) -> list:
        self.process.stdin.write(json.dumps(job) + "\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())

    def warm(self, argv: list[str], cwd: Path) -> None:
        """Run ``argv`` in the server itself (output discarded), so that the forked children
        start with the modules and caches a command loads on its first run."""
        self._ask({"warm": True, "argv": argv, "cwd": str(cwd)})

    def run(self, argv: list[str], cwd: Path,
            stdin: bytes = b"") -> tuple[object, int, bytes, bytes]:
        io_dir = Path(tempfile.mkdtemp(dir=self.scratch, prefix="io-"))
        try:
            (io_dir / "stdin").write_bytes(stdin)
            code, rss = self._ask({"argv": argv, "cwd": str(cwd), "stdin": str(io_dir / "stdin"),
                                   "out": str(io_dir / "stdout"), "err": str(io_dir / "stderr")})
            return code, rss, (io_dir / "stdout").read_bytes(), (io_dir / "stderr").read_bytes()
        finally:
            shutil.rmtree(io_dir)

    def close(self) -> None:
        self.process.stdin.close()
        self.process.stdout.close()
        self.process.wait(30)
