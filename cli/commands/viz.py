"""Draw the graph a spec executes, as Chainer draws it: graph.dot and graph.png, loop bodies as
clusters (a loop of more than 3 iterations as its first iteration and one node for the rest;
--expand draws them all). --stage ir draws static mode's traced IR (ir.dot, ir.png, and
ir.txt), --stage optimized the IR after the passes (ir.optimized.*), --stage all all three.
-o - prints the DOT on stdout instead (files only for formats named by --format). --diff draws
the union of this run and a second one (params.NAME=VALUE, NAME=PATH for an input, or a second
spec file; repeatable): shared nodes grey, the first run's own in orange, the second's in blue
(graph.diff.*, ir.diff.*, ir.optimized.diff.*)."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path

import typer

from cli import files, output, specs
from cli.errors import USAGE, CliError, command
from cli.options import parse_passes, passes_option, plugin_option
from graphcore.spec.drawing import STAGES, Drawing, draw_stages, render_png
from graphcore.spec.graph_diff import diff_dots

FORMATS = ("dot", "png")
STDOUT = "-"
BASENAMES = {"executed": "graph", "ir": "ir", "optimized": "ir.optimized"}


class Stage(StrEnum):
    executed = "executed"
    ir = "ir"
    optimized = "optimized"
    all = "all"


class Rankdir(StrEnum):
    TB = "TB"
    LR = "LR"


@command
def viz(
    spec: str = typer.Argument(..., help="Spec file, or - to read the spec from stdin."),
    seed: int | None = typer.Option(None, "--seed", min=0, help="RNG seed (default: the spec's)."),
    sets: list[str] = typer.Option([], "--set", help="Override a param: params.NAME=VALUE."),
    inputs: list[str] = typer.Option([], "--input", help="Read an input: NAME=PATH or NAME=-."),
    plugins: list[Path] = plugin_option(),
    rankdir: Rankdir = typer.Option(Rankdir.TB, "--rankdir", help="Layout direction."),
    stage: Stage = typer.Option(Stage.executed, "--stage", help="What to draw: the executed "
                                "graph, static mode's IR, the IR after the passes, or all."),
    passes: str | None = passes_option(),
    formats: str | None = typer.Option(
        None, "--format", help="Artifacts to write, a comma list of dot, png (default dot,png; "
        "none with -o)."),
    destination: str | None = typer.Option(
        None, "-o", "--output", help="Write the drawing here (.png: PNG, else DOT); - prints "
        "the DOT on stdout."),
    out_dir: str = typer.Option("outputs", "--out-dir", help="Artifacts folder."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No messages on stderr."),
    expand: bool = typer.Option(False, "--expand", help="Draw every loop iteration (a loop "
                                "of more than 3 is drawn as its first iteration and one node "
                                "for the rest)."),
    diffs: list[str] = typer.Option(
        [], "--diff", help="Draw how a second run differs: params.NAME=VALUE, NAME=PATH (an "
        "input) or a second spec file; repeat to combine."),
) -> None:
    wanted = _parse_formats(formats if formats is not None else
                            ("dot,png" if destination is None else ""))
    stages = list(STAGES) if stage is Stage.all else [stage.value]
    if destination is not None and len(stages) > 1:
        raise CliError("-o takes one drawing, and --stage all draws three", USAGE,
                       hint="pick one stage for -o, or drop -o to write them all")
    pass_list = parse_passes(passes)
    if pass_list is not None and stages == ["executed"]:
        raise CliError("--passes applies to --stage ir, optimized or all", USAGE)
    files.check_out_dir(out_dir)
    if destination not in (None, STDOUT):
        files.check_output(destination)
    loaded, overrides = specs.load_with_inputs(spec, sets, inputs, plugins)
    drawings = draw_stages(loaded, stages, seed=seed, input_overrides=overrides,
                           rankdir=rankdir.value, passes=pass_list, expand=expand or bool(diffs))
    if diffs:  # the union matches nodes one by one: every iteration is drawn
        drawings = _diff_drawings(spec, sets, inputs, plugins, diffs, drawings, seed=seed,
                                  rankdir=rankdir.value, passes=pass_list)
    # Render everything before writing anything: a missing renderer leaves no partial output.
    artifacts: dict[Path, bytes] = {}
    folder = Path(out_dir) / loaded.name  # created by the first write, after every render
    for name, drawing in drawings.items():
        dot = (drawing.dot + "\n").encode("utf-8")
        png = render_png(drawing.dot) if "png" in wanted or _is_png(destination) else None
        base = BASENAMES[name] + (".diff" if diffs else "")
        for fmt in wanted:
            artifacts[folder / f"{base}.{fmt}"] = png if fmt == "png" else dot
        if wanted and drawing.text is not None:
            artifacts[folder / f"{base}.txt"] = drawing.text.encode("utf-8")
        if destination not in (None, STDOUT):
            artifacts[Path(destination)] = png if _is_png(destination) else dot
    written = files.write_files(artifacts)  # as one set: never a new .dot beside an old .png
    drawing = next(iter(drawings.values()))
    if destination == STDOUT:  # one stage here: -o refuses --stage all
        sys.stdout.write(drawing.dot + "\n")
        sys.stdout.flush()
    if drawing.examples > 1:
        output.note(f"drew example {drawing.example + 1} of {drawing.examples} (the graph runs "
                    "once per example)", quiet)
    output.wrote(written, quiet)


def _parse_formats(text: str) -> list[str]:
    """``dot,png`` as a list in the given order, without repeats; unknown names are usage
    errors."""
    wanted: list[str] = []
    for name in (part.strip().lower() for part in text.split(",")):
        if not name:
            continue
        if name not in FORMATS:
            raise CliError(f"--format: unknown format {name!r}", USAGE,
                           hint=f"choose from {', '.join(FORMATS)}")
        if name not in wanted:
            wanted.append(name)
    return wanted


def _is_png(destination: str | None) -> bool:
    return destination not in (None, STDOUT) and destination.lower().endswith(".png")


def _diff_drawings(spec: str, sets: list[str], inputs: list[str], plugins: list[Path],
                   diffs: list[str], drawings: dict[str, Drawing], *, seed: int | None,
                   rankdir: str, passes: list[str] | None) -> dict[str, Drawing]:
    """Each stage's drawing replaced by the union of it and the second run's (``--diff``)."""
    other_spec, other_sets, other_inputs = _parse_diff(spec, diffs)
    if other_spec == specs.STDIN:
        raise CliError("--diff needs a spec file: the spec on stdin cannot be read twice",
                       USAGE, hint="give the spec as a path, or a second spec to --diff")
    other, other_overrides = specs.load_with_inputs(
        other_spec, [*sets, *other_sets], [*inputs, *other_inputs], plugins)
    others = draw_stages(other, list(drawings), seed=seed, input_overrides=other_overrides,
                         rankdir=rankdir, passes=passes)
    first_name = _run_name(spec, [*sets, *inputs])
    second_name = _run_name(other_spec, [*other_sets, *other_inputs]) \
        if other_spec != spec else _run_name(spec, [*sets, *inputs, *other_sets, *other_inputs])
    if first_name == second_name:
        second_name += " (again)"
    out = {}
    for stage, drawing in drawings.items():
        union = diff_dots(drawing.dot, others[stage].dot, first_name, second_name)
        out[stage] = Drawing(spec=drawing.spec, dot=union.dot,
                             nodes=len(union.only_first) + len(union.only_second)
                             + len(union.shared), clusters=1, example=drawing.example,
                             examples=drawing.examples)
    return out


def _parse_diff(spec: str, diffs: list[str]) -> tuple[str, list[str], list[str]]:
    """``--diff`` values as (the second run's spec, its extra --set, its extra --input)."""
    other_spec, other_sets, other_inputs = spec, [], []
    for item in diffs:
        name, sep, _ = item.partition("=")
        if not sep:
            if other_spec != spec:
                raise CliError("--diff names two specs; give at most one", USAGE)
            other_spec = item
        elif name.strip().startswith("params."):
            other_sets.append(item)
        else:
            other_inputs.append(item)
    return other_spec, other_sets, other_inputs


def _run_name(spec: str, overrides: list[str]) -> str:
    """How the legend names a run: its spec file's name and the overrides it ran with."""
    shown = Path(spec).name if spec != specs.STDIN else "stdin"
    return shown + (" " + " ".join(overrides) if overrides else "")
