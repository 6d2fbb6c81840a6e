"""List the op registry and the spec layers: names, attributes, documentation."""

from __future__ import annotations

import typer

from cli import output
from cli.errors import command
from graphcore.ops_catalog import catalog


@command
def ops(json_out: bool = typer.Option(False, "--json", help="Print one JSON document.")) -> None:
    document = catalog()
    if json_out:
        output.emit_json(document)
        return
    console = output.stdout_console()
    t = output.table("name", "kind", "inputs", "attributes", "description", console=console)
    for entry in document["ops"]:
        attrs = ", ".join(
            f"{a['name']}{'' if a['required'] else '=' + repr(a['default'])}"
            for a in entry["attributes"])
        t.add_row(entry["name"], entry["kind"], entry["inputs"], attrs, entry["doc"])
    output.show(console, t)
