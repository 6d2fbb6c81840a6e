"""Draw the graph a spec executes, as Chainer draws it: graph.dot and graph.png, loop bodies as
clusters. -o - prints the DOT on stdout instead (files only for formats named by --format)."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path

import typer

from cli import files, output, specs
from cli.errors import USAGE, CliError, command
from graphcore.spec.drawing import draw_spec, render_png

FORMATS = ("dot", "png")
STDOUT = "-"


class Rankdir(StrEnum):
    TB = "TB"
    LR = "LR"


@command
def viz(
    spec: str = typer.Argument(..., help="Spec file, or - to read the spec from stdin."),
    seed: int | None = typer.Option(None, "--seed", help="RNG seed (default: the spec's)."),
    sets: list[str] = typer.Option([], "--set", help="Override a param: params.NAME=VALUE."),
    inputs: list[str] = typer.Option([], "--input", help="Read an input: NAME=PATH or NAME=-."),
    rankdir: Rankdir = typer.Option(Rankdir.TB, "--rankdir", help="Layout direction."),
    formats: str | None = typer.Option(
        None, "--format", help="Artifacts to write, a comma list of dot, png (default dot,png; "
        "none with -o)."),
    destination: str | None = typer.Option(
        None, "-o", "--output", help="Write the drawing here (.png: PNG, else DOT); - prints "
        "the DOT on stdout."),
    out_dir: Path = typer.Option(Path("outputs"), "--out-dir", help="Artifacts folder."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No messages on stderr."),
) -> None:
    wanted = _parse_formats(formats if formats is not None else
                            ("dot,png" if destination is None else ""))
    overrides = specs.parse_inputs(inputs)
    if spec == specs.STDIN and specs.STDIN in overrides.values():
        raise CliError("stdin cannot carry both the spec and an input", USAGE)
    loaded = specs.load(spec, sets)
    drawing = draw_spec(loaded, seed=seed, input_overrides=overrides, rankdir=rankdir.value)
    dot = drawing.dot + "\n"
    # Render everything before writing anything: a missing renderer leaves no partial output.
    artifacts: dict[Path, bytes] = {}
    png = render_png(drawing.dot) if "png" in wanted or _is_png(destination) else None
    if wanted:
        folder = files.artifact_dir(out_dir, loaded.name)
        for fmt in wanted:
            artifacts[folder / f"graph.{fmt}"] = png if fmt == "png" else dot.encode("utf-8")
    if destination not in (None, STDOUT):
        artifacts[Path(destination)] = png if _is_png(destination) else dot.encode("utf-8")
    written = [files.write_bytes(path, data) for path, data in artifacts.items()]
    if destination == STDOUT:
        sys.stdout.write(dot)
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
