"""List the op registry and the spec layers: names, attributes, documentation.

With --plugin FILE, the ops that file registers are listed too, each marked with the file.
"""

from __future__ import annotations

from pathlib import Path

import typer

from cli import output
from cli.errors import command
from cli.options import plugin_option
from graphcore.commands.ops import catalog
from graphcore.plugins import load_plugin
from graphcore.registry import all_ops


@command
def ops(json_out: bool = typer.Option(False, "--json", help="Print one JSON document."),
        plugins: list[Path] = plugin_option()) -> None:
    modules = {load_plugin(plugin).__name__: str(plugin) for plugin in plugins}
    source = {name: modules[op.__module__] for name, op in all_ops().items()
              if op.__module__ in modules}
    document = catalog()
    for entry in document["ops"]:
        if entry["name"] in source:
            entry["plugin"] = source[entry["name"]]
    if json_out:
        output.emit_json(document)
        return
    console = output.stdout_console()
    t = output.table("name", "kind", "inputs", "attributes", "description", console=console)
    for entry in document["ops"]:
        attrs = ", ".join(
            f"{a['name']}{'' if a['required'] else '=' + repr(a['default'])}"
            for a in entry["attributes"])
        kind = f"{entry['kind']} ({entry['plugin']})" if "plugin" in entry else entry["kind"]
        t.add_row(entry["name"], kind, entry["inputs"], attrs, entry["doc"])
    output.show(console, t)
