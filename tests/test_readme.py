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


def test_readme_convolutional_example_runs(tmp_path, monkeypatch, capsys):
    text = README.read_text()
    section = text[text.index("### Convolutional models"):]
    block = re.search(r"```python\n(.*?)```", section, flags=re.S).group(1)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(block, str(README), "exec"), namespace)  # noqa: S102 - our own README
    assert namespace["model"].predictor.conv1.W.shape == (20, 1, 5, 5)
    assert namespace["model"].predictor.fc1.W.shape == (500, 800)
    assert capsys.readouterr().out.startswith("loss ")
