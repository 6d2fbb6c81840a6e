"""``graphtool viz``: the graph one run of a spec records, drawn as Chainer draws it.

- ``draw``: the executed graph, the static IR before/after the passes;
- ``clusters``: each node's loop, iteration and layer scope, the cluster tree, long loops
  collapsed;
- ``diff``, ``alignment``, ``dot_reader``: ``--diff``: two drawn runs as one graph coloured
  by which run has each node (grey both, dashed both but fed a different value, orange/blue
  one run's), nodes matched by structure, not shape (the same op on the same inputs, then the
  same op at the same place), from the DOT text read back.
"""
