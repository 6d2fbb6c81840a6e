"""Spec + arrays -> results: one define-by-run pass of a spec over live Variables.

- ``parameters``: ``SpecModel`` (one link per layer scope, built lazily) and ``build_model``,
  ``RunResult`` and ``PathEntry``, ``seeded``; ``params_file`` loads ``--params`` (an .npz,
  or a checkpoint's model) checked against the spec's declared shapes from its headers;
- ``plan``: what is resolved once per spec instead of once per step (each op step's class,
  arity and size check);
- ``forward``: one forward pass: the step walk that records the path (each ``if`` branch,
  each loop's trip count, with the step's position); ``predicate_scope`` is what a live
  predicate may read (values, ``params.k``, ``loop.i``/``loop.t``); ``sizes`` what a step is
  about to allocate, checked before it runs;
- ``calls``: ``run_spec`` and ``loss_function``, the calls over one pass (per-example runs go
  through ``graphcore.batching``); ``arguments`` checks the spec API's arguments.
"""
