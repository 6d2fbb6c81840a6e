"""The ``graphtool`` Typer application: global options, the commands, the process entry."""

from __future__ import annotations

import signal
import sys

import typer
from typer import rich_utils

try:  # Typer 0.2x ships its own copy of Click
    from typer._click.exceptions import ClickException
except ImportError:  # pragma: no cover - older Typer over the click package
    from click import ClickException

from cli import stdout
from cli.commands import bench, check, evaluate, export, ops, predict, report, sweep, train, viz
from cli.commands import run as run_command
from cli.errors import BROKEN_PIPE, FAILURE, OK, TERMINATED, State, Terminated
from cli.version import version
from graphcore.errors import clip_message

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


app.command("run", help=run_command.__doc__)(run_command.run)
app.command("train", help=train.__doc__)(train.train)
app.command("evaluate", help=evaluate.__doc__)(evaluate.evaluate)
app.command("predict", help=predict.__doc__)(predict.predict)
app.command("viz", help=viz.__doc__)(viz.viz)
app.command("bench", help=bench.__doc__)(bench.bench)
app.command("check", help=check.__doc__)(check.check)
app.command("ops", help=ops.__doc__)(ops.ops)
app.command("sweep", help=sweep.__doc__)(sweep.sweep)
app.command("report", help=report.__doc__)(report.report)
app.command("export", help=export.__doc__)(export.export)


def _terminate(signum: int, frame: object) -> None:
    raise Terminated


def run(args: list[str] | None = None) -> int:
    """Run the app once and return the exit code. Usage errors are Typer's boxes on a
    terminal and plain text elsewhere; a closed pipe or a failing stdout ends as
    ``cli.stdout.finish`` says; SIGTERM ends like Ctrl-C (temporary files removed), 143."""
    signal.signal(signal.SIGTERM, _terminate)
    stdout.install()
    # Help goes to stdout: Rich panels on a terminal, plain text when piped.
    app.rich_markup_mode = "rich" if sys.stdout.isatty() else None
    try:
        code = app(args=args, prog_name="graphtool", standalone_mode=False)
    except ClickException as e:
        e.message = clip_message(e.message)  # an option value may be megabytes long
        if sys.stderr.isatty():
            rich_utils.rich_format_error(e)
        else:
            e.show()
        code = e.exit_code
    except typer.Abort:
        print("aborted", file=sys.stderr)
        code = FAILURE
    except BrokenPipeError:
        code = BROKEN_PIPE
    except Terminated:  # outside a command (which maps it itself)
        code = TERMINATED
    except SystemExit as e:  # Rich and Click end a broken help page with exit(1)
        code = e.code if isinstance(e.code, int) else FAILURE
    return stdout.finish(code if isinstance(code, int) else OK)
