"""The registry as data: every op and spec layer with its inputs, attributes and first doc
line (what ``graphtool ops`` prints and what documentation tables are made from)."""

from __future__ import annotations

from typing import Any

from graphcore.function_node import Attr
from graphcore.language.layers import LAYERS
from graphcore.registry import all_ops


def _attribute(name: str, attr: Attr) -> dict[str, Any]:
    types = attr.type if isinstance(attr.type, tuple) else (attr.type,)
    entry: dict[str, Any] = {
        "name": name,
        "type": [t.__name__ for t in types],
        "required": attr.required,
        "default": None if attr.required else _plain(attr.default),
        "doc": attr.doc,
    }
    if attr.choices is not None:
        entry["choices"] = list(attr.choices)
    if attr.low is not None:
        entry["low"] = attr.low
    if attr.high is not None:
        entry["high"] = attr.high
    return entry


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _first_line(doc: str | None) -> str:
    text = (doc or "").strip()
    return text.splitlines()[0].replace("``", "") if text else ""


def catalog() -> dict[str, Any]:
    """``{"ops": [...]}``, sorted by name; layers (parameterized) and ops (stateless) alike."""
    entries = []
    for name, op in all_ops().items():
        if name in LAYERS:
            continue  # in specs the name means the layer; the op stays the Python F.* function
        entries.append({
            "name": name, "kind": "op", "label": op.label if isinstance(op.label, str)
            else op.__name__,
            "inputs": "any" if op.arity is None else str(op.arity),
            "elementwise": op.elementwise, "pure": op.pure, "higher_order": op.higher_order,
            "attributes": [_attribute(k, a) for k, a in op.attributes.items()],
            "doc": _first_line(op.__doc__),
        })
    for name, layer in LAYERS.items():
        entries.append({
            "name": name, "kind": "layer", "label": name,
            "inputs": "any" if layer.arity is None else str(layer.arity),
            "elementwise": False, "pure": True, "higher_order": True,
            "attributes": [_attribute(k, a) for k, a in layer.attributes.items()],
            "doc": layer.doc,
        })
    return {"ops": sorted(entries, key=lambda e: e["name"])}
