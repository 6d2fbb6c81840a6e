"""`graphtool viz --diff`: the union of two runs' graphs, shared nodes grey, the first run's
own in one colour, the second's in another, a legend naming both; for the executed graph and
the IR; read back from the DOT text (which node carries which colour)."""

from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from cli.app import app
from graphcore.spec.graph_diff import (
    FIRST_COLOUR,
    SECOND_COLOUR,
    SHARED_COLOUR,
    diff_dots,
    parse_dot,
)

SPECS = Path(__file__).resolve().parents[2] / "specs"
runner = CliRunner()


def diff_dot(*args):
    result = runner.invoke(app, ["viz", str(SPECS / "seed_dynamic.yaml"), "-o", "-", *args])
    assert result.exit_code == 0, result.stderr
    return result.stdout


def labels_by_colour(dot):
    """{colour: sorted labels} of the drawn nodes (the legend left out), and the legend."""
    graph = parse_dot(dot)
    found, legend = {}, []
    for name, attributes in graph.nodes.items():
        if name.startswith("legend"):
            legend.append(attributes["label"])
            continue
        found.setdefault(attributes["color"], []).append(attributes["label"])
    return {colour: sorted(labels) for colour, labels in found.items()}, legend


def test_relu_versus_sigmoid_colours_exactly_the_branch_that_differs():
    colours, legend = labels_by_colour(diff_dot("--diff", "params.apply_relu=false"))
    tail = ["(5), float32", "Sum", "Sum", "float32", "float32"]
    assert colours == {SHARED_COLOUR: ["x: (5), float32"],
                       FIRST_COLOUR: sorted(["ReLU", *tail]),
                       SECOND_COLOUR: sorted(["Sigmoid", *tail])}
    assert legend == ["only in seed_dynamic.yaml",
                      "only in seed_dynamic.yaml params.apply_relu=false", "in both"]


def test_sum_versus_prod_shares_the_relu_and_colours_the_reduction(tmp_path):
    negative = tmp_path / "negative.npy"
    np.save(negative, -np.ones(5, np.float32))  # mean(x) > 0 is false: prod, not sum
    colours, legend = labels_by_colour(diff_dot("--diff", f"x={negative}"))
    assert colours == {SHARED_COLOUR: ["(5), float32", "ReLU", "x: (5), float32"],
                       FIRST_COLOUR: ["Sum", "Sum", "float32", "float32"],
                       SECOND_COLOUR: ["Prod", "Sum", "float32", "float32"]}
    assert legend[1] == f"only in seed_dynamic.yaml x={negative}"


def test_edges_are_coloured_by_the_runs_that_have_them():
    text = diff_dot("--diff", "params.apply_relu=false")
    graph = parse_dot(text)
    label = {name: a.get("label") for name, a in graph.nodes.items()}
    colours = {}
    for head, tail in graph.edges:
        if head.startswith("legend"):
            continue
        colour = text.split(f"{head} -> {tail} [color=\"", 1)[1][:7]
        colours[label[head], label[tail]] = colour
    assert colours["x: (5), float32", "ReLU"] == FIRST_COLOUR
    assert colours["x: (5), float32", "Sigmoid"] == SECOND_COLOUR


def test_the_same_run_twice_is_all_grey():
    colours, _ = labels_by_colour(diff_dot("--diff", "params.apply_relu=true"))
    assert set(colours) == {SHARED_COLOUR}


def test_ir_diff_after_the_passes_shares_the_input_and_the_guard():
    colours, _ = labels_by_colour(diff_dot("--stage", "optimized",
                                           "--diff", "params.apply_relu=false"))
    assert colours[SHARED_COLOUR] == ["guard mean(x) > 0 is True\\nat "
                                      f"{SPECS / 'seed_dynamic.yaml'}:15:9", "input x : f32[5]"]
    assert [label.split(" ")[0] for label in colours[FIRST_COLOUR]] == ["relu", "sum[axis=None,",
                                                                       "sum[axis=None,"]
    assert colours[SECOND_COLOUR][0].startswith("sigmoid")


def test_a_second_spec_and_the_files_written(tmp_path):
    result = runner.invoke(app, ["viz", str(SPECS / "seed_dynamic.yaml"), "--stage", "all",
                                 "--format", "dot", "--out-dir", str(tmp_path),
                                 "--diff", str(SPECS / "seed_static.yaml")])
    assert result.exit_code == 0, result.stderr
    folder = tmp_path / "seed_dynamic"
    assert sorted(p.name for p in folder.iterdir()) == [
        "graph.diff.dot", "ir.diff.dot", "ir.optimized.diff.dot"]
    colours, legend = labels_by_colour((folder / "graph.diff.dot").read_text())
    assert "LinearFunction" in colours[SECOND_COLOUR]
    assert "ReLU" in colours[FIRST_COLOUR]
    assert legend[:2] == ["only in seed_dynamic.yaml", "only in seed_static.yaml"]


def test_two_specs_or_a_spec_on_stdin_are_usage_errors():
    result = runner.invoke(app, ["viz", str(SPECS / "seed_dynamic.yaml"), "-o", "-",
                                 "--diff", "a.yaml", "--diff", "b.yaml"])
    assert result.exit_code == 2 and "two specs" in result.stderr
    result = runner.invoke(app, ["viz", "-", "-o", "-", "--diff", "params.apply_relu=false"],
                           input=(SPECS / "seed_dynamic.yaml").read_text())
    assert result.exit_code == 2 and "stdin" in result.stderr


def test_a_missing_second_spec_is_exit_66():
    result = runner.invoke(app, ["viz", str(SPECS / "seed_dynamic.yaml"), "-o", "-",
                                 "--diff", "missing.yaml"])
    assert result.exit_code == 66, result.stderr


def test_parse_dot_reads_escaped_quotes_and_diff_keeps_repeated_nodes_apart():
    first = 'digraph g{0 [label="a \\"q\\""];1 [label="t"];2 [label="t"];0 -> 1;0 -> 2;}'
    second = 'digraph g{0 [label="a \\"q\\""];1 [label="t"];0 -> 1;}'
    assert parse_dot(first).nodes["0"]["label"] == 'a "q"'
    union = diff_dots(first, second, "one", "two")
    assert union.shared == ['a "q"', "t"] and union.only_first == ["t"]
    assert union.only_second == []
