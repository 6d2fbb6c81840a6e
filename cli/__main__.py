"""``python -m cli`` runs the ``graphtool`` command."""

from cli.entry import main

main()
