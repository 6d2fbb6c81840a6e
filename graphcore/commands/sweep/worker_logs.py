"""Run in each worker process of a sweep's own cluster (``local_cluster``'s ``preload``):
Dask's logs there go quiet but for CRITICAL.

A worker whose heartbeat meets the scheduler already closing logs an ERROR with a traceback
(dask/distributed#7105, a known shutdown race) after a sweep that succeeded, and
``LocalCluster(silence_logs=...)`` sets the level of the nanny's logger only, not the worker's.
The sweep reports what matters itself: a failed point, or one lost with its worker, is a
failed row.
"""

from __future__ import annotations

import logging


def dask_setup(worker) -> None:  # noqa: ARG001  (Dask's preload hook)
    logging.getLogger("distributed").setLevel(logging.CRITICAL)
