"""``python -m cli`` runs the ``graphtool`` command."""

from cli.app import main

main()
