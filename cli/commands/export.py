"""Export a spec to ONNX (its outputs, evaluation mode, parameters as initializers named
after the spec: l1/W ...); checked with onnx.checker before it is written. Needs the onnx
extra: pip install -e '.[onnx]'."""

from __future__ import annotations

from pathlib import Path

import typer

from cli import files, output, specs
from cli.errors import UNAVAILABLE, CliError, command
from cli.options import plugin_option
from graphcore.interpreter.params_file import load_params
from graphcore.interpreter.preprocessing import prepare_inputs
from graphcore.onnx import export_spec
from graphcore.spec import build_model, make_inputs

INSTALL_HINT = "pip install -e '.[onnx]' (the onnx and onnxruntime packages)"


@command
def export(
    spec: str = typer.Argument(..., help="Spec file, or - to read the spec from stdin."),
    params: Path | None = typer.Option(None, "--params", help="Load parameters (.npz)."),
    out: str | None = typer.Option(None, "-o", "--output",
                                   help="The .onnx file (default: OUT_DIR/<spec>/model.onnx)."),
    opset: int | None = typer.Option(None, "--opset", min=1,
                                     help="ONNX opset (default: 18)."),
    seed: int | None = typer.Option(None, "--seed", min=0, help="RNG seed (default: the spec's)."),
    sets: list[str] = typer.Option([], "--set", help="Override a param: params.NAME=VALUE."),
    inputs: list[str] = typer.Option([], "--input", help="Read an input: NAME=PATH or NAME=-."),
    plugins: list[Path] = plugin_option(),
    out_dir: str = typer.Option("outputs", "--out-dir", help="Artifacts folder."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No messages on stderr."),
) -> None:
    try:
        import onnx
    except ImportError:
        raise CliError("exporting to ONNX needs the onnx package", UNAVAILABLE,
                       hint=INSTALL_HINT) from None
    if out is not None:
        files.check_output(out)
    else:
        files.check_out_dir(out_dir)
    if params is not None:
        specs.require_readable(params, "--params ")
    loaded, overrides = specs.load_with_inputs(spec, sets, inputs, plugins)
    seed = loaded.seed if seed is None else seed
    model = build_model(loaded, seed)
    arrays = make_inputs(loaded.inputs, seed, loaded.folder, overrides)
    if params is not None:
        load_params(str(params), model)
    arrays = prepare_inputs(loaded, model, arrays)  # without --params: fitted on these rows
    onnx_model = export_spec(loaded, model, arrays, opset=opset, seed=seed)
    onnx.checker.check_model(onnx_model, full_check=True)
    target = out if out is not None else files.artifact_dir(out_dir, loaded.name) / "model.onnx"
    written = files.write_bytes(target, onnx_model.SerializeToString())
    output.wrote([written], quiet)
