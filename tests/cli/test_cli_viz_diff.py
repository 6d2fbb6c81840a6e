"""`graphtool viz --diff`: the union of two runs' graphs, nodes matched by structure (not by
shape): the same op on the same inputs grey, the same op at the same place fed a different
value grey and dashed, each run's own in its colour (an op replaced by another is one of each),
a shape that differs written `first → second`; long loops collapsed as `viz` draws them (each
run's trip count named); a legend naming each run by its own overrides; `--data` and
`--diff data=`; for the executed graph and the IR; read back from the DOT text."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cli.app import app
from graphcore.commands.viz.diff import (
    FED_COLOUR,
    FIRST_COLOUR,
    SECOND_COLOUR,
    SHARED_COLOUR,
    changed_label,
    diff_dots,
    parse_dot,
)

SPECS = Path(__file__).resolve().parents[2] / "specs"
runner = CliRunner()


def diff_dot(*args, spec=SPECS / "seed_dynamic.yaml"):
    result = runner.invoke(app, ["viz", str(spec), "-o", "-", *map(str, args)])
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


def edge_colours(text):
    """{(head label, tail label): colour} of the drawn edges."""
    graph = parse_dot(text)
    label = {name: a.get("label") for name, a in graph.nodes.items()}
    colours = {}
    for head, tail in graph.edges:
        if not head.startswith("legend"):
            colours[label[head], label[tail]] = text.split(f'{head} -> {tail} [color="', 1)[1][:7]
    return colours


def test_relu_versus_sigmoid_colours_the_replaced_op_and_dashes_what_it_feeds():
    colours, legend = labels_by_colour(diff_dot("--diff", "params.apply_relu=false"))
    assert colours == {SHARED_COLOUR: ["x: (5), float32"],
                       FIRST_COLOUR: ["ReLU"], SECOND_COLOUR: ["Sigmoid"],
                       FED_COLOUR: ["(5), float32", "Sum", "Sum", "float32", "float32"]}
    assert legend == ["only in seed_dynamic.yaml",
                      "only in seed_dynamic.yaml params.apply_relu=false", "in both",
                      "in both, fed a different value\n(what it computes may differ)"]
    assert 'style="filled,dashed"' in diff_dot("--diff", "params.apply_relu=false")


def test_sum_versus_prod_shares_the_relu_and_colours_the_reduction(tmp_path):
    negative = tmp_path / "negative.npy"
    np.save(negative, -np.ones(5, np.float32))  # mean(x) > 0 is false: prod, not sum
    colours, legend = labels_by_colour(diff_dot("--diff", f"x={negative}"))
    assert colours == {SHARED_COLOUR: ["(5), float32", "ReLU", "x: (5), float32"],
                       FIRST_COLOUR: ["Sum"], SECOND_COLOUR: ["Prod"],
                       FED_COLOUR: ["Sum", "float32", "float32"]}
    assert legend[1] == f"only in seed_dynamic.yaml x={negative}"


def test_edges_are_coloured_by_the_runs_that_have_them():
    colours = edge_colours(diff_dot("--diff", "params.apply_relu=false"))
    assert colours["x: (5), float32", "ReLU"] == FIRST_COLOUR
    assert colours["ReLU", "(5), float32"] == FIRST_COLOUR
    assert colours["x: (5), float32", "Sigmoid"] == SECOND_COLOUR
    assert colours["Sigmoid", "(5), float32"] == SECOND_COLOUR
    assert colours["(5), float32", "Sum"] == SHARED_COLOUR


def test_the_same_run_twice_is_all_grey():
    colours, _ = labels_by_colour(diff_dot("--diff", "params.apply_relu=true"))
    assert set(colours) == {SHARED_COLOUR}


ROWS_SPEC = """\
graphtool: 1
name: rows
params: {hidden: 5}
inputs:
  x: {file: x.npy, shape: [rows, 4]}
graph:
  - {op: linear, out_size: $params.hidden, name: l1}
  - relu
loss: {op: sum}
"""


def test_another_batch_size_is_the_same_graph_with_its_shapes_changed(tmp_path):
    np.save(tmp_path / "x.npy", np.ones((3, 4), np.float32))
    rows = tmp_path / "seven.npy"
    np.save(rows, np.ones((7, 4), np.float32))
    spec = tmp_path / "rows.yaml"
    spec.write_text(ROWS_SPEC)
    text = diff_dot("--set", "params.hidden=2", "--diff", f"x={rows}", spec=spec)
    colours, legend = labels_by_colour(text)
    assert set(colours) == {SHARED_COLOUR}  # every node in both, the same op on the same inputs
    assert "x: (3, 4) → (7, 4), float32" in colours[SHARED_COLOUR]
    assert "(3, 2) → (7, 2), float32" in colours[SHARED_COLOUR]
    assert "l1/W: (2, 4), float32" in colours[SHARED_COLOUR]
    # each run named by its own overrides; what both ran with in the legend's title
    assert legend[:2] == ["only in rows.yaml", f"only in rows.yaml x={rows}"]
    assert legend[3] == "(3, 2) → (7, 2): in both, differs\n(first run → second run)"
    assert 'label="legend (both runs: params.hidden=2)"' in text


def test_an_override_the_second_run_replaces_names_the_first_run():
    _, legend = labels_by_colour(diff_dot("--set", "params.apply_relu=true",
                                          "--diff", "params.apply_relu=false"))
    assert legend[:2] == ["only in seed_dynamic.yaml params.apply_relu=true",
                          "only in seed_dynamic.yaml params.apply_relu=false"]


def longer_rnn(tmp_path):
    """rnn_sequences with a last example of 9 steps instead of 7."""
    spec = tmp_path / "rnn_nine.yaml"
    spec.write_text((SPECS / "rnn_sequences.yaml").read_text().replace(
        "lengths: [5, 3, 7]", "lengths: [5, 3, 9]"))
    return spec


def test_sequences_of_another_length_are_aligned_step_by_step_and_collapsed(tmp_path):
    text = diff_dot("--diff", longer_rnn(tmp_path), spec=SPECS / "rnn_sequences.yaml")
    colours, _ = labels_by_colour(text)
    assert set(colours) == {SHARED_COLOUR, FED_COLOUR}  # the two extra steps are collapsed
    assert "s: (7, 8) → (9, 8), float32" in colours[SHARED_COLOUR]
    assert "cell/W: (12, 20), float32" in colours[SHARED_COLOUR]
    assert sorted(colours[SHARED_COLOUR]).count("Tanh") == 1  # t = 0, drawn once
    assert "(7, 1, 12) → (9, 1, 12), float32" in colours[FED_COLOUR]  # the stack of 7 vs 9
    assert "Stack" in colours[FED_COLOUR] and "LinearFunction" in colours[FED_COLOUR]
    assert 'label="for_each at ' in text and ':13:5 (7 → 9 iterations)"' in text
    assert ('label="t = 1 … 6 → 8\\n6 → 8 more iterations (--expand draws them)\\n'
            '20 nodes only in the second run"' in text)
    assert len(parse_dot(text).nodes) < 40


def test_expand_draws_every_step_of_both_runs(tmp_path):
    text = diff_dot("--expand", "--diff", longer_rnn(tmp_path),
                    spec=SPECS / "rnn_sequences.yaml")
    colours, _ = labels_by_colour(text)
    assert sorted(colours[SHARED_COLOUR]).count("Tanh") == 7
    assert sorted(colours[SECOND_COLOUR]).count("Tanh") == 2  # steps 7 and 8
    assert FIRST_COLOUR not in colours and "rest" not in text
    assert 'label="t = 8"' in text and text.count('label="t = 0"') == 1


def test_a_short_loop_against_a_long_one_names_both_trip_counts():
    text = diff_dot("--diff", "params.depth=5", spec=SPECS / "param_depth.yaml")
    colours, _ = labels_by_colour(text)
    assert ':13:5 (3 → 5 iterations)"' in text
    assert ('label="i = 1 … 2 → 4\\n2 → 4 more iterations (--expand draws them)\\n'
            '8 nodes only in the second run"' in text)
    assert colours[SECOND_COLOUR] == ["block_3/W: (8, 8), float32", "block_3/b: (8), float32",
                                      "block_4/W: (8, 8), float32", "block_4/b: (8), float32"]


def test_a_collapsed_node_is_grey_only_when_all_it_stands_for_is_in_both():
    text = diff_dot("--set", "params.depth=5", "--diff", "params.act=relu",
                    spec=SPECS / "param_depth.yaml")
    rest = next(a for name, a in parse_dot(text).nodes.items()
                if a.get("label", "").startswith("i = 1 … 4"))
    assert rest["color"] == FED_COLOUR
    assert rest["label"].endswith("\n4 nodes only in the first run, 4 nodes only in the "
                                  "second run")
    colours, legend = labels_by_colour(text)
    assert colours[FIRST_COLOUR] == ["Tanh"] and colours[SECOND_COLOUR] == ["ReLU"]  # i = 0
    assert 'label="legend (both runs: params.depth=5)"' in text


def test_ir_diff_after_the_passes_shares_the_input_and_the_guard():
    colours, _ = labels_by_colour(diff_dot("--stage", "optimized",
                                           "--diff", "params.apply_relu=false"))
    assert colours[SHARED_COLOUR] == ["guard mean(x) > 0 is True\nat "
                                      f"{SPECS / 'seed_dynamic.yaml'}:15:9", "input x : f32[5]"]
    assert colours[FIRST_COLOUR] == ["relu : f32[5]"]
    assert colours[SECOND_COLOUR] == ["sigmoid : f32[5]"]
    assert [label.split(" ")[0] for label in colours[FED_COLOUR]] == ["sum[axis=None,",
                                                                     "sum[axis=None,"]


def test_a_second_spec_and_the_files_written(tmp_path):
    result = runner.invoke(app, ["viz", str(SPECS / "seed_dynamic.yaml"), "--stage", "all",
                                 "--format", "dot", "--out-dir", str(tmp_path),
                                 "--diff", str(SPECS / "seed_static.yaml")])
    assert result.exit_code == 0, result.stderr
    folder = tmp_path / "seed_dynamic"
    assert sorted(p.name for p in folder.iterdir()) == [
        "graph.diff.dot", "ir.diff.dot", "ir.optimized.diff.dot"]
    colours, legend = labels_by_colour((folder / "graph.diff.dot").read_text())
    assert colours[SECOND_COLOUR].count("LinearFunction") == 2
    assert "ReLU" in colours[FED_COLOUR]  # relu(x) against relu(l1(x))
    assert "x: (5) → (3, 4), float32" in colours[SHARED_COLOUR]
    assert legend[:2] == ["only in seed_dynamic.yaml", "only in seed_static.yaml"]


@pytest.mark.slow  # processes; test_computational_graph's two-process DOT test stays quick
def test_the_diff_is_byte_identical_across_processes(tmp_path):
    def dot(hash_seed):
        done = subprocess.run(
            [sys.executable, "-m", "cli", "viz", str(SPECS / "param_depth.yaml"), "-o", "-",
             "--set", "params.depth=5", "--diff", "params.act=relu", "--diff", "params.depth=7"],
            capture_output=True, text=True, check=True,
            env={**os.environ, "PYTHONHASHSEED": str(hash_seed)})
        return done.stdout

    assert dot(1) == dot(2)


def test_two_specs_or_a_spec_on_stdin_are_usage_errors():
    result = runner.invoke(app, ["viz", str(SPECS / "seed_dynamic.yaml"), "-o", "-",
                                 "--diff", "a.yaml", "--diff", "b.yaml"])
    assert result.exit_code == 2 and "two specs" in result.stderr
    result = runner.invoke(app, ["viz", "-", "-o", "-", "--diff", "params.apply_relu=false"],
                           input=(SPECS / "seed_dynamic.yaml").read_text())
    assert result.exit_code == 2 and "stdin" in result.stderr


def test_an_input_on_stdin_is_read_once_so_the_second_run_needs_a_file(tmp_path):
    args = ["viz", str(SPECS / "seed_dynamic.yaml"), "-o", "-", "--input", "x=-"]
    result = runner.invoke(app, [*args, "--diff", "params.apply_relu=false"],
                           input="1\n2\n3\n4\n5\n")
    assert result.exit_code == 2, result.stderr
    assert "the second run cannot read input 'x' from stdin again" in result.stderr
    negative = tmp_path / "negative.npy"
    np.save(negative, -np.ones(5, np.float32))
    result = runner.invoke(app, [*args, "--diff", f"x={negative}"], input="1\n2\n3\n4\n5\n")
    assert result.exit_code == 0, result.stderr
    assert 'label="Prod"' in result.stdout


def test_a_missing_second_spec_is_exit_66():
    result = runner.invoke(app, ["viz", str(SPECS / "seed_dynamic.yaml"), "-o", "-",
                                 "--diff", "missing.yaml"])
    assert result.exit_code == 66, result.stderr


# --- data-fed specs: --data and --diff data= ---------------------------------------------

POINTS_SPEC = """\
graphtool: 1
name: points
data:
  file: points.csv
  x: {columns: [f1, f2]}
  t: {column: label, dtype: int32}
graph:
  - {op: linear, out_size: 2, from: x, to: logits}
loss: {op: softmax_cross_entropy, from: [logits, t]}
outputs: [logits]
"""


def points(tmp_path):
    (tmp_path / "points.csv").write_text("f1,f2,label\n1,2,0\n3,4,1\n5,6,0\n")
    (tmp_path / "more.csv").write_text("label,f2,f1\n0,2,1\n1,4,3\n0,6,5\n1,8,7\n1,9,9\n")
    spec = tmp_path / "points.yaml"
    spec.write_text(POINTS_SPEC)
    return spec


def test_viz_draws_a_data_fed_spec_on_its_data_or_on_another_file(tmp_path):
    spec = points(tmp_path)
    assert 'label="x: (3, 2), float32"' in diff_dot(spec=spec)
    assert 'label="x: (5, 2), float32"' in diff_dot("--data", tmp_path / "more.csv", spec=spec)


def test_diff_data_draws_the_second_run_on_another_data_file(tmp_path):
    spec = points(tmp_path)
    more = tmp_path / "more.csv"
    colours, legend = labels_by_colour(diff_dot("--diff", f"data={more}", spec=spec))
    assert set(colours) == {SHARED_COLOUR}
    assert "x: (3, 2) → (5, 2), float32" in colours[SHARED_COLOUR]
    assert "t: (3) → (5), int32" in colours[SHARED_COLOUR]
    assert legend[:2] == ["only in points.yaml", f"only in points.yaml data={more}"]
    _, legend = labels_by_colour(diff_dot("--data", more, "--diff", f"data={more}", spec=spec))
    assert legend[:2] == [f"only in points.yaml data={more}",
                          f"only in points.yaml data={more} (again)"]


SEQUENCES_SPEC = """\
graphtool: 1
name: sequences
data:
  file: seq.npz
  s: {values: feats, offsets: starts}
graph:
  - for_each: s
    as: x_t
    carry: {h: {zeros: [1, 4]}}
    body:
      - {op: reshape, from: x_t, shape: [1, 3]}
      - {op: concat, from: [_, h], axis: 1}
      - {op: linear, out_size: 4, name: cell}
      - {op: tanh, to: h}
  - {op: sum, from: h}
loss: {op: square}
"""


def test_diff_data_of_sequences_compares_each_runs_last_example(tmp_path):
    rng = np.random.RandomState(0)
    np.savez(tmp_path / "seq.npz", feats=rng.randn(12, 3), starts=[0, 4, 7])  # last: 5 steps
    np.savez(tmp_path / "long.npz", feats=rng.randn(20, 3), starts=[0, 10])  # last: 10 steps
    spec = tmp_path / "seq.yaml"
    spec.write_text(SEQUENCES_SPEC)
    result = runner.invoke(app, ["viz", str(spec), "-o", "-",
                                 "--diff", f"data={tmp_path / 'long.npz'}"])
    assert result.exit_code == 0, result.stderr
    assert "drew the last example of each run (3 and 2 examples" in result.stderr
    assert 'label="s: (5, 3) → (10, 3), float32"' in result.stdout
    assert ":7:5 (5 → 10 iterations)" in result.stdout
    assert "t = 1 … 4 → 9\\n4 → 9 more iterations" in result.stdout


def test_data_options_refuse_a_spec_without_data_and_a_missing_file(tmp_path):
    spec = points(tmp_path)
    cases = [
        ([SPECS / "seed_static.yaml", "--data", spec], 2,
         "has no `data:` section naming the inputs a data file feeds"),
        ([SPECS / "seed_static.yaml", "--diff", f"data={spec}"], 2,
         f"--diff data={spec}: spec 'seed_static' has no `data:` section"),
        ([spec, "--diff", f"data={tmp_path / 'missing.csv'}"], 66,
         f"--diff data={tmp_path / 'missing.csv'}: file not found"),
        ([spec, "--data", tmp_path / "missing.csv"], 66, "file not found"),
    ]
    for args, code, message in cases:
        result = runner.invoke(app, ["viz", *map(str, args), "-o", "-"])
        assert result.exit_code == code, (args, result.stderr)
        assert message in result.stderr and "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


# --- the library ------------------------------------------------------------------------

def test_parse_dot_reads_escaped_quotes_and_diff_keeps_repeated_nodes_apart():
    first = 'digraph g{0 [label="a \\"q\\""];1 [label="t"];2 [label="t"];0 -> 1;0 -> 2;}'
    second = 'digraph g{0 [label="a \\"q\\""];1 [label="t"];0 -> 1;}'
    assert parse_dot(first).nodes["0"]["label"] == 'a "q"'
    union = diff_dots(first, second, "one", "two")
    assert union.shared == ['a "q"', "t"] and union.only_first == ["t"]
    assert union.only_second == []


def test_parse_dot_reads_clusters_and_where_each_node_sits():
    graph = parse_dot('digraph g{0 [label="x"];subgraph cluster_0{label="loop";'
                      'subgraph cluster_1{label="i = 0";1 [label="t"];}2 [label="r"];}0 -> 1;}')
    assert graph.clusters == {"cluster_0": {"label": "loop"}, "cluster_1": {"label": "i = 0"}}
    assert graph.cluster_parent == {"cluster_0": None, "cluster_1": "cluster_0"}
    assert graph.cluster_path("1") == ["cluster_0", "cluster_1"]
    assert graph.cluster_path("2") == ["cluster_0"] and graph.cluster_path("0") == []


def test_a_changed_label_writes_each_differing_part_as_first_to_second():
    assert changed_label("s: (7, 8), float32", "s: (9, 8), float32") == \
        "s: (7, 8) → (9, 8), float32"
    assert changed_label("relu : f32[3,5]", "relu : f32[7,5]") == "relu : f32[3,5] → f32[7,5]"
    assert changed_label("Sum", "Sum") == "Sum"
