"""``graphtool report``: the page and the artifacts it reads."""
