"""``graphcore.reporter``: where Chainer scripts import the reporter from."""

from graphcore.training.reporter import (  # noqa: F401
    DictSummary,
    Reporter,
    Summary,
    get_current_reporter,
    report,
    report_scope,
)
