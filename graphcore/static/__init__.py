"""Static mode: trace once into an IR, optimize it with passes, replay a flat plan.

``trace`` (define-by-run once -> IR) -> ``passes`` (pure IR -> IR) -> ``lower`` (IR -> Plan of
kernels over preallocated buffers) -> replay. ``compile`` / ``static_graph`` put it behind a
cache keyed by the input signature.
"""

from graphcore.static.call_node import StaticCall
from graphcore.static.compile import (
    CompiledFunction,
    compile,
    static_code,
    static_graph,
)

__all__ = ["CompiledFunction", "StaticCall", "compile", "static_code", "static_graph"]
