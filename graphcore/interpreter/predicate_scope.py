"""The names a live predicate may read during a run: values, ``params.k``, ``loop.i``/``loop.t``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class PredicateScope(Mapping):
    """Names a predicate may read: values, ``params.k`` and ``loop.i`` / ``loop.t``."""

    def __init__(self, env: dict[str, Any], params: dict[str, Any],
                 loops: list[dict[str, int]]) -> None:
        self.env = env
        self.params = params
        self.loop = loops[-1] if loops else {}

    def __getitem__(self, key: str) -> Any:
        if key.startswith("params."):
            return self.params[key[7:]]
        if key.startswith("loop."):
            return self.loop[key[5:]]
        return self.env[key]

    def __iter__(self):
        yield from self.env
        yield from (f"params.{k}" for k in self.params)
        yield from (f"loop.{k}" for k in self.loop)

    def __len__(self) -> int:
        return len(self.env) + len(self.params) + len(self.loop)
