"""Per-example runs batched: a spec with sequence or ``examples`` inputs run over many
examples at once (``batching="auto" | "pad" | "off"``).

- ``run``: ``run_spec``, the spec API's run: one pass, or per example, batched where it can be;
- ``analysis``: once per spec, what blocks batching (located) and whether its sequences may
  be padded;
- ``batcher``: groups by shape or padded buckets (a cost model; static mode rounds a bucket's
  steps to four sizes per octave so that shuffled batches share plans), ``pad_refusal``,
  ``BatchingInfo``;
- ``batched_pass``: ``BatchRun``, the interpreter's ``ForwardPass`` over a group with a
  leading example axis (its override points only: batch rules, flags, padding masks on
  ``for_each`` carries); ``outcomes``: ``Fallback`` (the group runs one example at a time)
  and ``Split`` (its examples disagree on a live predicate);
- ``rules``: the table of how each op and layer batches (map, axes, shape, last, fold,
  custom) or why it cannot; ``predicates``: a live predicate for every example at once;
- ``split``: an ``if`` whose examples disagree, in the same pass: ``RowPartition`` (``then``
  rows first; the IR op ``partition``), each branch on its rows (``permutate`` + a slice),
  the changed values merged back;
- ``results``: ``GroupResults``, a batched call's groups, read back per example on demand.
"""
