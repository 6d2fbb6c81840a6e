"""``graphtool train``: a spec trained by a ``Trainer`` (settings, data, checkpoints, logs)."""
