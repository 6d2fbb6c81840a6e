"""A strict reading of an HTML page with the standard library's parser: every non-void element
closed in order, ids unique, one doctype, nothing that would fetch from the network, and no
inline event handler."""

from __future__ import annotations

import re
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}
FETCHING_ATTRIBUTES = {"src", "href", "xlink:href", "action", "srcset", "poster", "data"}


class StrictPage(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.ids: list[str] = []
        self.problems: list[str] = []
        self.doctypes = 0
        self.tags: dict[str, int] = {}
        self.text: list[str] = []

    def handle_decl(self, decl: str) -> None:
        self.doctypes += decl.lower() == "doctype html"

    def handle_starttag(self, tag, attrs):
        self._attributes(tag, attrs)
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self._attributes(tag, attrs)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes <{self.stack[-1] if self.stack else None}>"
                                 f" at {self.getpos()}")
            return
        self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)

    def _attributes(self, tag, attrs):
        self.tags[tag] = self.tags.get(tag, 0) + 1
        for name, value in attrs:
            if name == "id":
                self.ids.append(value)
            if name in FETCHING_ATTRIBUTES and value and not value.startswith(("#", "data:")):
                self.problems.append(f"<{tag} {name}={value!r}> would fetch")
            if name.startswith("on"):
                self.problems.append(f"<{tag} {name}=...>: an inline event handler")
        if tag == "link":
            self.problems.append("<link> would fetch")


def check_page(text: str) -> StrictPage:
    """The parsed page; fails the test on any problem."""
    page = StrictPage()
    page.feed(text)
    page.close()
    assert page.doctypes == 1, "one <!DOCTYPE html>"
    assert not page.stack, f"elements left open: {page.stack}"
    assert not page.problems, page.problems
    duplicates = sorted({i for i in page.ids if page.ids.count(i) > 1})
    assert not duplicates, f"duplicate ids: {duplicates[:5]}"
    assert not re.search(r"url\(|@import", text), "CSS that would fetch"
    return page
