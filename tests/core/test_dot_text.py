"""``graphcore.dot_text``: any text, quoted for DOT, draws as itself. Labels holding DOT's
special characters (a quote, a backslash at the end, a record's ``{ } | < >``) are rendered by
the renderer (graphviz-pure) and read back from its SVG unchanged; ordinary labels are written
exactly as Chainer writes them."""

from __future__ import annotations

import html
import random
import re

import numpy as np
import pytest

import graphcore.functions as F
from graphcore import FunctionNode, Variable
from graphcore.commands.viz.dot_reader import parse_dot
from graphcore.commands.viz.draw import find_renderer, render_png, render_svg
from graphcore.computational_graph import build_computational_graph
from graphcore.dot_text import REPLACEMENT, attribute_list, quote, unquote

HOSTILE = ['a<b>"c{d|e}\\', "\\", '"', "{", "}|", "<x>", "end\\", 'q\\"', "\\n", "\\l", "a b"]
needs_renderer = pytest.mark.skipif(find_renderer() is None, reason="no Graphviz renderer")


def svg_texts(svg: str) -> list[str]:
    return [html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]


class Hostile(FunctionNode):
    def __init__(self, label: str) -> None:
        self._label = label

    @property
    def label(self) -> str:
        return self._label

    def forward(self, inputs):
        return (inputs[0] * 2,)


def test_ordinary_text_is_written_as_it_is():
    for text in ("LinearFunction", "(3, 5), float32", "l1/W: (5, 4), float32", "_ + _",
                 "repeat at specs/x.yaml:3:5", "#6495ED", "filled"):
        assert quote(text) == quote(text, record=True) == f'"{text}"'
    assert attribute_list({"label": "Sum", "shape": "record"}) == 'label="Sum",shape="record"'


def test_special_characters_are_escaped_and_read_back():
    assert quote('a"b\\') == '"a\\"b\\\\"'
    assert quote("two\nlines") == '"two\\nlines"'
    assert quote("{a|<b>}") == '"{a|<b>}"'  # outside a record label they mean nothing
    assert quote("{a|<b>}", record=True) == '"\\{a\\|\\<b\\>\\}"'
    assert attribute_list({"label": "{", "shape": "record", "tooltip": "{"}) == \
        'label="\\{",shape="record",tooltip="{"'
    assert quote("nul\x00 bell\x07 tab\t surrogate\ud800") == \
        f'"nul{REPLACEMENT} bell{REPLACEMENT} tab{REPLACEMENT} surrogate{REPLACEMENT}"'
    generator = random.Random(0)
    alphabet = 'ab \\"{}|<>\nnl'
    for _ in range(500):
        text = "".join(generator.choice(alphabet) for _ in range(generator.randint(0, 12)))
        for record in (False, True):
            assert unquote(quote(text, record=record)) == text
            token = re.fullmatch(r'"(?:[^"\\]|\\.)*"', quote(text, record=record), re.S)
            assert token is not None, text  # one DOT string: no quote ends it early


def test_the_reader_gives_back_the_text_every_label_was_written_from():
    x = Variable(np.ones(2, np.float32), name=HOSTILE[0])
    (y,) = Hostile(HOSTILE[0]).apply((x,))
    graph = parse_dot(build_computational_graph(F.sum(y)).dump())
    labels = [a["label"] for a in graph.nodes.values()]
    assert HOSTILE[0] in labels and f"{HOSTILE[0]}: (2), float32" in labels


@needs_renderer
def test_hostile_op_labels_and_variable_names_render_as_written():
    """Chainer's function nodes are records: each label from a user's op draws as its text."""
    for label in HOSTILE:
        x = Variable(np.ones(2, np.float32), name=label)
        (y,) = Hostile(label).apply((x,))
        dot = build_computational_graph(F.sum(y)).dump()
        assert render_png(dot).startswith(b"\x89PNG")
        texts = svg_texts(render_svg(dot))
        # graphviz collapses a record label's spaces into one and keeps the text otherwise
        assert label in texts and f"{label}: (2), float32" in texts, (label, texts)
