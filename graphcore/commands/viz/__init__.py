"""``graphtool viz``: drawings of a run, clusters, ``--diff``."""
