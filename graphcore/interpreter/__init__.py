"""Spec + arrays -> results: one define-by-run pass of a spec over live Variables.

- ``parameters``: ``SpecModel`` (one link per layer scope, built lazily), ``build_model``,
  ``check_model``, ``seeded``; ``params_file`` loads ``--params`` (an .npz, or a checkpoint's
  model) checked against the spec's declared shapes from its headers;
- ``preprocessing``: what a spec fits on its training rows and keeps in its model (label
  vocabularies, ``normalize`` statistics: ``SpecModel.preprocessing``), fitting, encoding
  class names (a located error for an unknown one), ``normalized`` (applied where the pass
  reads its inputs, as ops) and ``class_names``;
- ``plan``: what is resolved once per spec instead of once per step (each op step's class,
  arity and size bound);
- ``forward``: ``ForwardPass``, one forward pass: the step walk that records the path (each
  ``if`` branch, each loop's trip count, with the step's position). Its ``op`` and
  ``for_each`` are written once, over documented override points (``op_inputs``,
  ``check_size``, ``call``, ``bind``, ``failure``/``refuse``, ``batched``/``mark``,
  ``padding_mask``/``keep_ended``/``stack``, ``finish``) that batching's ``BatchRun`` and
  ONNX export's pass override; ``predicate_scope`` is what a live predicate may read
  (values, ``params.k``, ``loop.i``/``loop.t``); ``sizes`` what a step is about to allocate,
  checked before it runs;
- ``examples``: how many examples a call holds, each example's rows of a per-row input;
- ``calls``: ``run_one``, ``run_examples``, ``loss_function``: the calls over passes (the spec
  API's ``run_spec`` is ``graphcore.batching.run``, which batches per-example calls);
  ``arguments`` checks the spec API's arguments;
- ``results``: ``RunResult`` (a plain dataclass; per-example views read on first use) and
  ``PathEntry``.
"""
