"""The README's Python example runs as written."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_example_runs(tmp_path, monkeypatch):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "the README has a Python example"
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(blocks[0], str(README), "exec"), namespace)  # noqa: S102 - our own README
    assert (tmp_path / "outputs" / "graph.dot").read_text().startswith("digraph graphname{")
    assert (tmp_path / "outputs" / "params.npz").exists()
    assert namespace["model"].l1.W.shape == (5, 4)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["outputs"]  # nothing beside it


def test_readme_commands_write_artifacts_only_under_outputs():
    """No README command line leaves a file in the folder it runs from (issue 8, item 17)."""
    readme = README.read_text()
    lines = [line for block in re.findall(r"```sh\n(.*?)```", readme, flags=re.S)
             for line in block.splitlines()]
    for line in lines:
        for target in re.findall(r"(?:--save|-o|--output|>)\s+(\S+)", line):
            assert target.startswith("outputs/") or target.startswith("/dev/"), line
