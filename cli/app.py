"""The ``graphtool`` Typer application: global options, the commands, the process entry."""

from __future__ import annotations

import sys

import typer

from cli.commands import bench, check, ops, run, train, viz
from cli.errors import BROKEN_PIPE, State, silence_stdout
from cli.version import version

app = typer.Typer(
    name="graphtool",
    help="Build, run, differentiate, draw and time neural-network graphs from YAML specs.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _print_version(value: bool) -> None:
    if value:
        print(f"graphtool {version()}")
        raise typer.Exit()


@app.callback()
def root(debug: bool = typer.Option(False, "--debug", help="Show tracebacks of failures."),
         show_version: bool = typer.Option(False, "--version", callback=_print_version,
                                           is_eager=True, help="Print the version and exit."),
         ) -> None:
    """graphtool: dynamic and static computational graphs, measured."""
    State.debug = debug


app.command("run", help=run.__doc__)(run.run)
app.command("train", help=train.__doc__)(train.train)
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
