"""Validating a spec's ``inputs:`` section (a mixin of the spec loader)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from graphcore.language.syntax import InputSpec
from graphcore.language.validation import NAME_PATTERN, PARAM_REF, SOURCES, did_you_mean, items_of
from graphcore.language.yaml_source import LMap, Loc


class InputsReader:
    """``read_inputs`` and its helpers; needs the loader's ``error``/``value``/``read_*``."""

    def read_inputs(self, node: Any) -> dict[str, InputSpec]:
        if node is None:
            return {}
        if not isinstance(node, LMap):
            self.error(node.loc, "inputs must be a mapping of names to sources")
            return {}
        inputs = {}
        for name in node:
            self.check_value_name(name, node.key_loc(name))
            self.input_locs[name] = node[name].loc
            spec = self.read_input(name, node[name])
            if spec is not None:
                inputs[name] = spec
        return inputs

    def read_input(self, name: str, node: Any) -> InputSpec | None:
        if not isinstance(node, LMap):
            self.error(node.loc, f"input '{name}' must be a mapping such as "
                       "{random: normal, shape: [3, 4]}")
            return None
        sources = [k for k in node if k in SOURCES]
        if len(sources) != 1:
            what = "no source" if not sources else f"{len(sources)} sources"
            self.error(node.loc, f"input '{name}' has {what}; give exactly one of "
                       f"{', '.join(SOURCES)}")
            return None
        source = sources[0]
        allowed = _INPUT_KEYS[source]
        for key in node:
            if key != source and key not in allowed:
                self.error(node.key_loc(key), f"input '{name}': '{key}' does not apply to a "
                           f"{source} input", did_you_mean(key, allowed))
        spec = InputSpec(name=name, source=source, loc=node.loc)
        src = node[source]
        if source in ("zeros", "ones"):
            spec.shape = self.read_shape(src, f"input '{name}'")
        elif source == "random":
            spec.distribution = self.read_choice(src, "random", ("normal", "uniform", "randint"),
                                                 "normal")
            spec.shape = self.read_shape(node.get("shape"), f"input '{name}'", node.loc)
            self.read_random_options(spec, node)
        elif source == "file":
            path = self.value(src)
            if not isinstance(path, str) or not path:
                self.error(src.loc, f"input '{name}': file must be a path")
            else:
                spec.path = path
                self.read_file_options(spec, node)
        else:
            spec.format = self.read_choice(src, "stdin", ("npy", "csv"), "npy")
        if spec.shape and spec.shape[0] is None and getattr(self, "named_dim", None):
            spec.batch_dim = self.named_dim
            if spec.source != "file" and spec.source != "stdin":
                self.error(node.loc, f"input '{name}': a named batch dimension "
                           f"('{spec.batch_dim}') takes its size from data; a {source} input "
                           "has none", "give a size, or read the input from a file or `data:`")
        if "dtype" in node:
            spec.dtype = self.read_dtype(node["dtype"])
            spec.dtype_given = True
        elif spec.distribution == "randint":
            spec.dtype = "int32"
        spec.keep_file_dtype = not spec.dtype_given and source in ("file", "stdin")
        if spec.distribution in ("normal", "uniform") and not spec.dtype.startswith("float"):
            self.error(node["dtype"].loc, f"input '{name}': random {spec.distribution} values "
                       f"cannot be {spec.dtype}", "use random: randint for integers")
        if "examples" in node:
            self.read_examples(node, spec)
        elif "lengths" in node:
            spec.lengths = self.read_lengths(node["lengths"], spec)
        elif spec.shape and None in spec.shape and spec.batch_dim is None:
            self.error(node.loc, f"input '{name}': a null length in shape needs 'lengths'")
        self.read_whole_batch(node, spec)
        self.check_size(spec)
        return spec

    def read_whole_batch(self, node: LMap, spec: InputSpec) -> None:
        """``whole_batch: true``: in a run once per example, every example sees the whole
        array of an input that has a named leading axis (not only its own row)."""
        if "whole_batch" not in node:
            return
        value = self.value(node["whole_batch"])
        where = node["whole_batch"].loc
        if not isinstance(value, bool):
            self.error(where, f"whole_batch must be true or false, got "
                       f"{self.show(node['whole_batch'])}")
        elif spec.sequence:
            self.error(where, f"input '{spec.name}' is a sequence, one per example; "
                       "whole_batch applies to an input of rows")
        elif spec.batch_dim is None:
            self.error(where, f"input '{spec.name}': whole_batch applies to an input with a "
                       "named leading axis (data rows, or shape: [batch, ...])")
        else:
            spec.whole_batch = value

    def read_random_options(self, spec: InputSpec, node: LMap) -> None:
        numbers = {}
        for key in ("low", "high", "mean", "std"):
            if key in node:
                value = self.value(node[key])
                if isinstance(value, bool) or not isinstance(value, int | float):
                    self.error(node[key].loc, f"{key} must be a number, got {self.show(node[key])}")
                elif not math.isfinite(value):  # NaN would pass every range check below
                    self.error(node[key].loc, f"{key} must be a finite number, got "
                               f"{self.show(node[key])}")
                else:
                    numbers[key] = value
        dist = spec.distribution
        if dist == "randint" and "high" not in numbers:
            self.error(node.loc, f"input '{spec.name}': randint needs 'high' (exclusive)")
        low = numbers.get("low", 0)
        high = numbers.get("high", 1 if dist != "randint" else low + 1)
        if dist in ("uniform", "randint") and high <= low:
            self.error(node.loc, f"input '{spec.name}': high ({high}) must be greater than low "
                       f"({low})")
        for key in ("mean", "std"):
            if key in numbers and dist != "normal":
                self.error(node.key_loc(key), f"input '{spec.name}': '{key}' applies to "
                           "random: normal only")
        for key in ("low", "high"):
            if key in numbers and dist == "normal":
                self.error(node.key_loc(key), f"input '{spec.name}': '{key}' applies to "
                           "uniform and randint, not normal (use mean and std)")
        if numbers.get("std", 1.0) < 0:
            self.error(node["std"].loc, "std must not be negative")
        spec.low, spec.high = low, high
        spec.mean, spec.std = numbers.get("mean", 0.0), numbers.get("std", 1.0)

    def read_file_options(self, spec: InputSpec, node: LMap) -> None:
        suffix = Path(spec.path).suffix.lower()
        if suffix not in (".npy", ".npz", ".csv"):
            self.error(node["file"].loc, f"input '{spec.name}': file must be .npy, .npz or "
                       f".csv, got '{suffix or spec.path}'")
        if suffix == ".npz":
            key = self.value(node["key"]) if "key" in node else None
            if not isinstance(key, str):
                self.error(node.loc, f"input '{spec.name}': an .npz file needs 'key' (the "
                           "array's name inside it)")
            spec.key = key
        elif "key" in node:
            self.error(node.key_loc("key"), "'key' applies to .npz files only")
        if "delimiter" in node:
            value = self.value(node["delimiter"])
            if not isinstance(value, str) or len(value) != 1:
                self.error(node["delimiter"].loc, "delimiter must be one character")
            else:
                spec.delimiter = value
        if "skip_header" in node:
            spec.skip_header = self.read_int(node["skip_header"], "skip_header", 0, low=0)
        if "shape" in node:
            spec.shape = self.read_shape(node["shape"], f"input '{spec.name}'")

    def read_shape(self, node: Any, what: str, parent: Loc | None = None,
                   allow_null_first: bool = True) -> tuple[int | None, ...] | None:
        if node is None:
            self.error(parent, f"{what} needs a 'shape' (a list of sizes)")
            return None
        value = self.value(node)
        if isinstance(value, int) and not isinstance(value, bool):
            value = [value]
        if not isinstance(value, list):
            self.error(node.loc, f"{what}: shape must be a list of sizes, got {self.show(node)}")
            return None
        shape: list[int | None] = []
        items = items_of(node, value)
        self.named_dim = None  # `shape: [batch, 2]`: the leading axis binds at run time
        for i, (item, size) in enumerate(zip(items, value, strict=False)):
            if size is None and i == 0 and allow_null_first:
                shape.append(None)
            elif i == 0 and allow_null_first and isinstance(size, str) \
                    and NAME_PATTERN.match(size) and not size.startswith(PARAM_REF):
                self.named_dim = size
                shape.append(None)
            elif isinstance(size, bool) or not isinstance(size, int) or size < 1:
                self.error(item.loc, f"{what}: sizes must be positive integers, got "
                           f"{self.show(item)}")
                return None
            else:
                shape.append(size)
        return tuple(shape)

    def read_dtype(self, node: Any) -> str:
        value = self.value(node)
        allowed = ("float16", "float32", "float64", "int32", "int64", "bool")
        if value not in allowed:
            self.error(node.loc, f"dtype must be one of {', '.join(allowed)}, got "
                       f"{self.show(node)}",
                       did_you_mean(str(value), allowed))
            return "float32"
        return value

    def read_lengths(self, node: Any, spec: InputSpec) -> tuple[int, ...] | None:
        value = self.value(node)
        if (not isinstance(value, list) or not value
                or any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in value)):
            self.error(node.loc, "lengths must be a non-empty list of positive integers")
            return None
        if not spec.shape or spec.shape[0] is not None:
            self.error(node.loc, f"input '{spec.name}': lengths need shape [null, ...] (the "
                       "null axis is the sequence length)")
        return tuple(value)

    def read_examples(self, node: Any, spec: InputSpec) -> None:
        """``examples: N``: N examples of ``shape`` each, the same as ``lengths`` of N equal
        lengths (``shape[0]``) with a null first size."""
        value = self.value(node["examples"])
        if "lengths" in node:
            self.error(node["examples"].loc, f"input '{spec.name}': give lengths or examples, "
                       "not both")
        elif isinstance(value, bool) or not isinstance(value, int) or value < 1:
            self.error(node["examples"].loc, f"examples must be a positive integer, got "
                       f"{self.show(node['examples'])}")
        elif not spec.shape or spec.shape[0] is None:
            self.error(node["examples"].loc, f"input '{spec.name}': examples needs the shape "
                       "of one example, with at least one axis and no null size")
        else:
            spec.lengths = (spec.shape[0],) * value
            spec.shape = (None, *spec.shape[1:])

    def check_size(self, spec: InputSpec) -> None:
        if not spec.shape:
            return
        rest = math.prod(n for n in spec.shape if n is not None)  # no int64 overflow
        longest = max(spec.lengths or (1,)) if spec.shape[0] is None else 1
        total = rest * sum(spec.lengths or (1,)) if spec.shape[0] is None else rest
        if rest * longest > self.max_elements:
            self.error(spec.loc, f"input '{spec.name}' would have {rest * longest:,} elements, "
                       f"over the limit of {self.max_elements:,}")
        elif total > self.max_elements:  # every example is made before the run starts
            self.error(spec.loc, f"input '{spec.name}' would have {total:,} elements in its "
                       f"{len(spec.lengths):,} examples, over the limit of "
                       f"{self.max_elements:,}")


_INPUT_KEYS = {
    "random": ("shape", "low", "high", "mean", "std", "dtype", "lengths", "examples"),
    "zeros": ("dtype", "lengths", "examples"),
    "ones": ("dtype", "lengths", "examples"),
    "file": ("key", "delimiter", "skip_header", "dtype", "shape", "whole_batch"),
    "stdin": ("dtype", "shape", "whole_batch"),
}
