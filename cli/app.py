"""The ``graphtool`` Typer application: global options, the commands, the process entry.

Each command lives in its own module of ``cli.commands`` (a function of the command's name,
the module's docstring its help), imported when the command is looked up: a process loads
the command it runs, not all twelve (``graphtool --help`` and a mistyped command's "did you
mean" load them all).
"""

from __future__ import annotations

import importlib
import signal
import sys
from collections.abc import Iterator, MutableMapping

import typer
from typer.core import TyperGroup
from typer.main import get_command_from_info
from typer.models import CommandInfo

try:  # Typer 0.2x ships its own copy of Click
    from typer._click.core import Command
    from typer._click.exceptions import ClickException
except ImportError:  # pragma: no cover - older Typer over the click package
    from click import ClickException, Command

from cli import stdout
from cli.errors import BROKEN_PIPE, FAILURE, OK, TERMINATED, State, Terminated
from cli.version import version
from graphcore.errors import clip_message

# The commands, in the order help lists them; each is the function of its name in the module
# of its name in cli.commands.
COMMANDS = ("run", "train", "evaluate", "predict", "summary", "viz", "bench", "check", "ops",
            "sweep", "report", "export")


class _LazyCommands(MutableMapping):
    """The group's name -> command table: a command's module is imported, and the command
    built, when the table is first asked for it."""

    def __init__(self) -> None:
        self._built: dict[str, Command] = {}

    def __getitem__(self, name: str) -> Command:
        if name not in self._built:
            if name not in COMMANDS:
                raise KeyError(name)
            module = importlib.import_module(f"cli.commands.{name}")
            info = CommandInfo(name=name, callback=getattr(module, name), help=module.__doc__)
            self._built[name] = get_command_from_info(
                info, pretty_exceptions_short=app.pretty_exceptions_short,
                rich_markup_mode=app.rich_markup_mode)
        return self._built[name]

    def __setitem__(self, name: str, command: Command) -> None:
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        del self._built[name]

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*COMMANDS, *self._built]))

    def __len__(self) -> int:
        return len(set(COMMANDS) | set(self._built))


class _Group(TyperGroup):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.commands = _LazyCommands()


app = typer.Typer(
    name="graphtool",
    cls=_Group,
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
            from typer import rich_utils  # Rich's panels: only for an error on a terminal

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
