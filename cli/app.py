"""The ``graphtool`` Typer application: global options, the commands, the process entry."""

from __future__ import annotations

import sys

import typer

from cli.commands import bench, check, evaluate, ops, predict, run, train, viz
from cli.errors import BROKEN_PIPE, State, silence_stdout

app = typer.Typer(
    name="graphtool",
    help="Build, run, differentiate, draw and time neural-network graphs from YAML specs.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback()
def root(debug: bool = typer.Option(False, "--debug", help="Show tracebacks of failures.")
         ) -> None:
    """graphtool: dynamic and static computational graphs, measured."""
    State.debug = debug


app.command("run", help=run.__doc__)(run.run)
app.command("train", help=train.__doc__)(train.train)
app.command("evaluate", help=evaluate.__doc__)(evaluate.evaluate)
app.command("predict", help=predict.__doc__)(predict.predict)
app.command("viz", help=viz.__doc__)(viz.viz)
app.command("bench", help=bench.__doc__)(bench.bench)
app.command("check", help=check.__doc__)(check.check)
app.command("ops", help=ops.__doc__)(ops.ops)


def main() -> None:
    """Process entry: run the app; a closed pipe (``| head``) ends quietly."""
    try:
        app()
    except BrokenPipeError:
        silence_stdout()
        sys.exit(BROKEN_PIPE)
    finally:
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            silence_stdout()
