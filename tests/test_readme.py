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
    assert (tmp_path / "graph.dot").read_text().startswith("digraph graphname{")
    assert (tmp_path / "params.npz").exists()
    assert namespace["model"].l1.W.shape == (5, 4)


def test_readme_sequence_example_runs(tmp_path, monkeypatch):
    blocks = [b for b in re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
              if "L.NStepLSTM" in b]
    assert len(blocks) == 1, "the README shows the sequence models once"
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(blocks[0], str(README), "exec"), namespace)  # noqa: S102 - our own README
    assert [y.shape for y in namespace["ys"]] == [(4, 8), (2, 8), (6, 8)]
    assert namespace["y"].shape == (3, 6, 8)
    assert namespace["mha"].W_q.grad is not None
    assert list(tmp_path.iterdir()) == []  # writes nothing
