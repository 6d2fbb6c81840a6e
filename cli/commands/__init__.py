"""One module per ``graphtool`` command."""
