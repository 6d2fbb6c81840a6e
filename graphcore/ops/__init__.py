"""Built-in ops, grouped by kind. Importing this package registers all of them."""

from graphcore.ops import (  # noqa: F401
    activation,
    arithmetic,
    array,
    embed,
    linalg,
    loss,
    math,
    noise,
    reduction,
)
