"""The spec language: YAML text -> a validated ``Spec``, every error at once, each located.

In processing order:

- ``located``: located values (``LMap``/``LSeq``/``LScalar`` with their ``Loc``) and
  ``error_at``, the one way an error points into the file;
- ``yaml_source``: YAML -> located values, composed with PyYAML's safe loader and walked node
  by node (no tag is constructed); ``yaml_scalars`` resolves plain scalars as the safe loader
  does and knows the YAML 1.1 traps (``1e-3`` is text, ``on`` a boolean, ``key:value``, a
  folded ``- item``), whose hints the loader adds to any error about that value;
  ``yaml_errors`` tells PyYAML's syntax errors in words, at the line to fix;
- ``predicate``: the predicate language of ``if:``/``while:`` (its own tokenizer, parser,
  printer and evaluator: ``nodes``, ``parse``, ``evaluate``); nothing is ever ``eval``-ed;
- ``loader``: top-level keys, ``params`` and ``--set``, outputs, layer names; it mixes in the
  validators: ``validate_inputs``, ``validate_steps`` (ops, layers, attributes, names in
  scope), ``validate_control`` (``if``, ``repeat``, ``while``, ``for_each``),
  ``validate_work`` (loop trips multiplied through nesting, op steps per run, unrolled layer
  scopes), ``validate_workflow`` (``data:``, ``validation:``, ``train:``), over what
  ``validation`` shares (scopes, limits, names, descriptions of values);
- ``layers``: the parameterized layers a step may name (``{op: linear, out_size: 5}``), each
  with its shape rule in ``layer_shapes``;
- ``shape_pass``: the shape and dtype of every step on every branch and loop body, no array
  computed (``infer_types``); the loader runs it last, so a mismatch anywhere is a load error;
- ``syntax``: the result, plain dataclasses (``Spec`` and its steps, each keeping its ``Loc``)
  that every later stage walks.
"""
