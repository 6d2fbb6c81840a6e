"""Bounded work and clear refusals at load (issue 9 items 3, 4, 5, 7, 8, 11; issue 8 items 8, 9,
13): every refusal is a located ``file:line:col: error`` with the numbers in it, exit 65 from
the CLI, and the work limits refuse before anything is allocated, which the subprocess tests
show by running ``graphtool`` under a 1 GiB address-space cap (``RLIMIT_AS``)."""

from __future__ import annotations

import io
import math
import os
import resource
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import quick_first
from time_limits import time_limit

from graphcore.errors import SpecError, SpecErrors
from graphcore.spec import load_spec_text

ROOT = Path(__file__).resolve().parents[2]
FILE = "model.yaml"
MEMORY_CAP = 1 << 30  # far below what any refused request would allocate


def errors_of(text: str, **options) -> list[SpecError]:
    with pytest.raises(SpecErrors) as info:
        load_spec_text(text, file=FILE, **options)
    return info.value.errors


def the_error(text: str, **options) -> SpecError:
    errors = errors_of(text, **options)
    assert len(errors) == 1, [e.headline() for e in errors]
    return errors[0]


def at(error: SpecError) -> str:
    return f"{error.file}:{error.line}:{error.col}"


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def graphtool_capped(tmp_path: Path, *args: str,
                     timeout: float = 60) -> subprocess.CompletedProcess:
    """``graphtool ARGS`` in a child process whose address space is capped at 1 GiB."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "cli", *args], cwd=tmp_path, env=env,
                          preexec_fn=_cap_memory, capture_output=True, text=True,
                          timeout=timeout)


def refused_capped(tmp_path: Path, text: str, *args: str) -> str:
    """Run ``text`` as spec.yaml under the memory cap; assert a clean exit 65; its stderr."""
    (tmp_path / "spec.yaml").write_text(text)
    done = graphtool_capped(tmp_path, "run", "spec.yaml", *args)
    assert done.returncode == 65, done.stderr
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr
    assert done.stderr.startswith("spec.yaml:") or done.stderr.startswith("error:"), done.stderr
    return done.stderr


# ------------------------------------------------------------------ item 5: linear-time scalars

@pytest.mark.parametrize("value", ["1" * 200_000, "1" * 200_000 + "x", "1." + "1" * 200_000,
                                   "1" * 200_000 + "e"])
def test_a_long_scalar_of_digits_loads_in_linear_time(value):
    start = time.perf_counter()
    with time_limit(10):  # the quadratic regex took minutes: fail, don't hang
        errors = errors_of(f"graphtool: 1\nseed: {value}\ngraph: [relu]\n")
    assert time.perf_counter() - start < 1.0
    assert at(errors[0]) == "model.yaml:2:7"


def test_an_integer_past_the_digit_limit_says_so():
    error = errors_of(f"graphtool: 1\nseed: {'7' * 4301}\ngraph: [relu]\n")[0]
    assert error.hint == ("an integer of 4,301 digits is too long to be read as a number "
                          "(at most 4,300 digits)")


# ------------------------------------------------------------------ item 11: NaN and infinities

NAN_HEAD = "graphtool: 1\ninputs:\n  x: {random: normal, shape: [3, 4]}\ngraph:\n"


@pytest.mark.parametrize(("step", "message"), [
    ("{op: dropout, ratio: .nan}",
     "attribute 'ratio' of 'dropout' must be a finite number from 0.0 to 1.0, got .nan"),
    ("{op: dropout, ratio: .inf}",
     "attribute 'ratio' of 'dropout' must be a finite number from 0.0 to 1.0, got .inf"),
    ("{op: leaky_relu, slope: .inf}",
     "attribute 'slope' of 'leaky_relu' must be a finite number of at least 0.0, got .inf"),
    ("{op: batch_normalization, eps: .nan}", "attribute 'eps' of 'batch_normalization' must "
     "be a finite number of at least 0.0, got .nan"),
    ("{op: add_scalar, value: .nan}",
     "attribute 'value' of 'add_scalar' must be a number, not NaN, got .nan"),
])
def test_nan_and_inf_fail_range_checks_at_load(step, message):
    error = the_error(NAN_HEAD + f"  - {step}\n")
    assert (at(error), error.message) == ("model.yaml:5:" + str(error.col), message)
    assert error.line == 5


def test_nan_input_options_are_refused():
    error = the_error("graphtool: 1\ninputs:\n  x: {random: normal, std: .nan, shape: [3]}\n"
                      "graph: [relu]\n")
    assert (at(error), error.message) == ("model.yaml:3:28", "std must be a finite number, "
                                          "got .nan")


def test_a_clip_bound_may_still_be_infinite():
    load_spec_text(NAN_HEAD + "  - {op: clip, x_min: 0.0, x_max: .inf}\n", file=FILE)


# ------------------------------------------------------------------ issue 8 item 8, issue 9 item 8

SET_SPEC = ("graphtool: 1\nparams: {hidden: 5}\ninputs:\n  x: {random: normal, shape: [3, 4]}\n"
            "graph:\n  - {op: linear, out_size: $params.hidden}\n")


def test_a_bad_set_value_is_named_in_the_message():
    error = the_error(SET_SPEC, overrides=["params.hidden=sixteen"])
    assert at(error) == "model.yaml:6:28"
    assert error.message == ("attribute 'out_size' of 'linear' must be an integer, got "
                             "'sixteen' (from --set params.hidden=sixteen)")


def test_a_bad_param_value_names_the_param():
    error = the_error(SET_SPEC.replace("hidden: 5", "hidden: five"))
    assert error.message == ("attribute 'out_size' of 'linear' must be an integer, got "
                             "'five' (from params.hidden)")


def test_set_with_an_integer_past_the_digit_limit_is_a_located_error():
    error = the_error(SET_SPEC, overrides=["params.hidden=" + "9" * 4301])
    assert at(error) == "--set:1:15"
    assert error.message == ("--set params.hidden: an integer of 4,301 digits is too long to "
                             "be read as a number (at most 4,300 digits)")


# ------------------------------------------------------------------ item 3: work through nesting

LOOP_HEAD = "graphtool: 1\ninputs:\n  x: {random: normal, shape: [3, 4]}\ngraph:\n"
NESTED_REPEATS = LOOP_HEAD + """\
  - repeat: 100000
    body:
      - repeat: 100000
        body:
          - repeat: 100000
            body: [relu]
"""
HUGE_WHILE = LOOP_HEAD + """\
  - while: mean(_) > -10
    max_iters: 1000000000
    body: [relu]
"""
LONG_FOR_EACH = """\
graphtool: 1
inputs:
  x: {random: normal, shape: [50000000]}
graph:
  - for_each: x
    as: v
    body: [relu]
"""
NESTED_UNROLL = LOOP_HEAD + """\
  - repeat: 1000
    unroll: true
    body:
      - repeat: 1000
        unroll: true
        body: [{op: linear, out_size: 4}]
"""
MANY_EXAMPLES = """\
graphtool: 1
inputs:
  x: {random: normal, shape: [null, 2], lengths: [LENGTHS]}
graph:
  - repeat: 1000
    body: [relu]
""".replace("LENGTHS", ", ".join(["1"] * 2000))


@pytest.mark.parametrize(("text", "where", "message"), [
    (NESTED_REPEATS, "model.yaml:9:13", "this repeat would run 1,000,000,000,000,000 op steps "
     "(trips: 100,000 x 100,000 x 100,000), over the limit of 1,000,000 per run"),
    (HUGE_WHILE, "model.yaml:6:16", "max_iters 1,000,000,000 is over the limit of 100,000 "
     "trips"),
    (LONG_FOR_EACH, "model.yaml:5:5", "for_each over 'x' would make 50,000,000 trips (its "
     "axis 0), over the limit of 100,000"),
    (NESTED_UNROLL, "model.yaml:8:9", "unrolling this repeat would make 1,000,000 layer scopes "
     "(trips: 1,000 x 1,000), over the limit of 10,000"),
    (MANY_EXAMPLES, "model.yaml:5:5", "this repeat would run 2,000,000 op steps (trips: 2,000 "
     "examples x 1,000), over the limit of 1,000,000 per run"),
])
def test_work_multiplied_through_nesting_is_refused_at_load(text, where, message):
    start = time.perf_counter()
    error = the_error(text)
    assert (at(error), error.message) == (where, message)
    assert time.perf_counter() - start < 2.0


def test_loops_side_by_side_add_up():
    text = LOOP_HEAD + "".join("  - repeat: 100000\n    body: [relu, tanh]\n"
                               for _ in range(6))
    error = the_error(text)
    assert (at(error), error.message) == ("model.yaml:4:1", "the graph would run 1,200,000 op "
                                          "steps, over the limit of 1,000,000 per run")


def test_work_within_the_limits_loads_and_builds_quickly():
    """100 x 100 unrolled scopes (the limit) load and build in linear time (it was O(n^2))."""
    from graphcore.spec import build_model

    text = NESTED_UNROLL.replace("1000", "100")
    start = time.perf_counter()
    model = build_model(load_spec_text(text, file=FILE))
    assert len(list(model.children())) == 10_000
    assert time.perf_counter() - start < 3.0


def test_for_each_over_a_long_computed_value_is_refused_before_running_it():
    from graphcore.spec import run

    text = LOOP_HEAD.replace("[3, 4]", "[1]") + (
        "  - {op: broadcast_to, shape: [200000], to: long}\n"
        "  - for_each: long\n    as: v\n    body: [relu]\n")
    with pytest.raises(SpecError) as info:  # exit 65, as for every limit
        run(load_spec_text(text, file=FILE))
    assert (at(info.value), info.value.message) == (
        "model.yaml:6:5", "for_each over 'long' would make 200,000 trips (its axis 0), over "
        "the limit of 100,000")


@pytest.mark.parametrize("text", quick_first([NESTED_REPEATS, HUGE_WHILE, LONG_FOR_EACH,
                                              NESTED_UNROLL]))
def test_unbounded_work_is_refused_under_a_memory_cap(tmp_path, text):
    stderr = refused_capped(tmp_path, text)
    assert "over the limit" in stderr


# ------------------------------------------------------------------ item 4: sizes the limit missed

def test_the_total_of_sequence_lengths_is_limited():
    text = ("graphtool: 1\ninputs:\n  x: {random: normal, shape: [null, 1000000], "
            "lengths: [40, 40]}\ngraph: [relu]\n")
    error = the_error(text)
    assert (at(error), error.message) == (
        "model.yaml:3:6", "input 'x' would have 80,000,000 elements in its 2 examples, over the "
        "limit of 50,000,000")


LAZY_LINEAR = """\
graphtool: 1
inputs:
  x: {random: normal, shape: [1, 20000]}
graph:
  - {op: linear, out_size: 20000}
"""
BIG_RESULTS = """\
graphtool: 1
inputs:
  a: {random: normal, shape: [20000, 1]}
  b: {random: normal, shape: [1, 20000]}
  c: {random: normal, shape: [40000000]}
graph:
  - STEP
"""


@pytest.mark.parametrize(("text", "message"), quick_first([
    (LAZY_LINEAR, "linear: its weight W would have 400,000,000 elements (shape (20000, 20000)), "
     "over the limit of 50,000,000"),
    (BIG_RESULTS.replace("STEP", "{op: matmul, from: [a, b]}"), "matmul: the result would have "
     "400,000,000 elements (shape (20000, 20000)), over the limit of 50,000,000"),
    (BIG_RESULTS.replace("STEP", "{op: concat, from: [c, c, c], axis: 0}"), "concat: the result "
     "would have 120,000,000 elements (its 3 inputs together), over the limit of 50,000,000"),
    (BIG_RESULTS.replace("STEP", "{op: add, from: [a, b]}"), "add: the result would have "
     "400,000,000 elements (shape (20000, 20000)), over the limit of 50,000,000"),
]))
def test_sizes_known_only_from_the_inputs_are_refused_before_allocating(tmp_path, text,
                                                                         message):
    stderr = refused_capped(tmp_path, text)
    line = text.splitlines().index(next(ln for ln in text.splitlines() if "op:" in ln)) + 1
    assert stderr.splitlines()[0] == f"spec.yaml:{line}:5: error: {message}"


def test_a_permutation_of_a_column_is_not_taken_for_a_broadcast():
    """``permutate``'s result has its input's shape: x (n, 1) and n indices are not the (n, n)
    an elementwise op of the two would make."""
    from graphcore.interpreter.sizes import oversized

    column, indices = np.broadcast_to(0.0, (20000, 1)), np.broadcast_to(0, (20000,))
    assert oversized("permutate", None, [column, indices], 50_000_000) is None
    assert oversized("add", None, [column, indices], 50_000_000) is not None


# ------------------------------------------------------------------ --params (9.4, 9.7, 8.9)

SEED_STATIC = ROOT / "specs" / "seed_static.yaml"


def _zip_bomb(path: Path, arrays: dict[str, tuple[int, ...]]) -> None:
    """An .npz whose float32 members of ``shape`` are all zeros: a few MB on disk, inflating
    to the full size. Deflate is flushed after each 1 MiB of zeros, so one compressed block
    is written over and over instead of compressing gigabytes here."""
    chunk = bytes(1 << 20)
    local, central = bytearray(), bytearray()
    for key, shape in arrays.items():
        header = io.BytesIO()
        np.lib.format.write_array_header_1_0(
            header, {"descr": "<f4", "fortran_order": False, "shape": shape})
        head = header.getvalue()
        blocks, rest = divmod(4 * math.prod(shape), len(chunk))
        deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
        data = deflate.compress(head) + deflate.flush(zlib.Z_FULL_FLUSH)
        block = deflate.compress(chunk) + deflate.flush(zlib.Z_FULL_FLUSH)
        data += block * blocks + deflate.compress(bytes(rest)) + deflate.flush()
        crc = zlib.crc32(head)
        for _ in range(blocks):
            crc = zlib.crc32(chunk, crc)
        crc = zlib.crc32(bytes(rest), crc)
        name = f"{key}.npy".encode()
        size = len(head) + blocks * len(chunk) + rest
        fields = (20, 0, 8, 0, 0x21, crc, len(data), size, len(name), 0)
        offset = len(local)
        local += struct.pack("<4s5H3L2H", b"PK\x03\x04", *fields) + name + data
        central += struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, *fields, 0, 0, 0, 0,
                               offset) + name
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(arrays), len(arrays), len(central),
                      len(local), 0)
    path.write_bytes(bytes(local + central + end))


def test_the_zip_bomb_helper_makes_a_real_npz(tmp_path):
    _zip_bomb(tmp_path / "small.npz", {"a": (2, 2**18)})
    with np.load(tmp_path / "small.npz") as npz:
        assert npz["a"].shape == (2, 2**18) and not npz["a"].any()


def test_a_zip_bomb_params_file_is_refused_from_its_headers(tmp_path):
    bomb = tmp_path / "bomb.npz"
    # 1.2 GB of zeros in about 1.3 MB: over the memory cap if it were ever inflated
    _zip_bomb(bomb, {"l1/W": (5, 60 * 2**20), "l1/b": (5, 1), "l2/W": (2, 5), "l2/b": (2, 1)})
    assert bomb.stat().st_size < 2_000_000
    done = graphtool_capped(tmp_path, "run", str(SEED_STATIC), "--params", str(bomb), "-q")
    assert done.returncode == 65, done.stderr
    assert done.stderr == (
        f"error: --params {bomb} does not fit spec 'seed_static': l1/W holds 314,572,800 "
        "elements, over the limit of 50,000,000; l1/b has shape (5, 1) in the file, but the "
        "spec declares (5,); l2/b has shape (2, 1) in the file, but the spec declares (2,)\n")


def _params(path: Path, **arrays) -> Path:
    np.savez(path, **{k.replace("_", "/"): np.asarray(v, np.float32) for k, v in arrays.items()})
    return path


def test_params_must_fit_the_shapes_the_spec_declares(tmp_path):
    """Regression: a lazily sized W took any shape from the file (out_size 2 gave (3, 5))."""
    from typer.testing import CliRunner

    from cli.app import app

    bad = _params(tmp_path / "bad.npz", l1_W=np.zeros((3, 4)), l1_b=np.zeros(3),
                  l2_W=np.zeros((2, 5)), l2_b=np.zeros(2))
    result = CliRunner().invoke(app, ["run", str(SEED_STATIC), "--params", str(bad), "-q",
                                      "--out-dir", str(tmp_path)])
    assert result.exit_code == 65
    assert result.stderr == (
        f"error: --params {bad} does not fit spec 'seed_static': l1/W has shape (3, 4) in the "
        "file, but the spec declares (5, any); l1/b has shape (3,) in the file, but the spec "
        "declares (5,)\n")


@pytest.mark.parametrize(("arrays", "words"), [
    ({"l1_W": np.zeros((5, 4)), "l1_b": np.zeros(5)},
     "it lacks l2/W, l2/b, which the spec's model has"),
    ({"l1_W": np.zeros((5, 4)), "l1_b": np.zeros(5), "l2_W": np.zeros((2, 5)),
      "l2_b": np.zeros(2), "l3_W": np.zeros(1)}, "it has l3/W, which the spec's model does not"),
])
def test_missing_and_extra_params_are_named_in_cli_terms(tmp_path, arrays, words):
    from graphcore.errors import SerializationError
    from graphcore.interpreter.params_file import load_params
    from graphcore.spec import build_model, load_spec_file

    spec = load_spec_file(SEED_STATIC)
    with pytest.raises(SerializationError) as info:
        load_params(_params(tmp_path / "p.npz", **arrays), build_model(spec))
    assert str(info.value).endswith(words)
    assert "strict" not in str(info.value)


def test_a_fitting_params_file_loads(tmp_path):
    from graphcore.interpreter.params_file import load_params
    from graphcore.spec import build_model, load_spec_file

    model = build_model(load_spec_file(SEED_STATIC))
    load_params(_params(tmp_path / "p.npz", l1_W=np.ones((5, 4)), l1_b=np.zeros(5),
                        l2_W=np.zeros((2, 5)), l2_b=np.zeros(2)), model)
    assert model.l1.W.array.shape == (5, 4) and model.l1.W.array.sum() == 20


@pytest.mark.parametrize("content", quick_first([b"graphtool: 1\nname: x\n", b"\x93NUMPY\x01\x00"]))
def test_a_params_file_that_is_not_npz_says_so(tmp_path, content):
    path = tmp_path / "params.yaml"
    path.write_bytes(content)
    done = graphtool_capped(tmp_path, "run", str(SEED_STATIC), "--params", str(path), "-q")
    assert done.returncode == 65
    assert done.stderr == (f"error: --params {path} is not an .npz file (a zip archive of .npy "
                           "arrays)\n")


# ------------------------------------------------------------------ 9.8: options and plugins

PLUGIN_SPEC = """graphtool: 1
inputs:
  x: {random: normal, shape: [2, 3]}
graph:
  - {op: linear, out_size: 2}
  - OP
loss: {op: sum}
"""
PLUGIN = '''
import graphcore


@graphcore.register_op
class Broken(graphcore.FunctionNode):
    name = "OP"
    arity = 1

    def forward(self, inputs):
        BODY

    def backward(self, indexes, grad_outputs):
        return grad_outputs
'''


@pytest.mark.parametrize(("body", "message"), quick_first([
    ("return inputs[0] * 2", "forward must return a tuple of numpy arrays, got one array of "
     "shape (2, 2) (return it as a 1-tuple: `return y,`)"),
    ("return inputs[0].tolist()", "forward must return a tuple of numpy arrays, got a list of "
     "list"),
    ("raise SystemExit(3)", "forward called exit (3)"),
]))
def test_a_broken_plugin_op_is_a_located_runtime_failure(tmp_path, body, message):
    op = f"broken_{abs(hash(body)) % 10**8}"
    (tmp_path / "ops.py").write_text(PLUGIN.replace("OP", op).replace("BODY", body))
    (tmp_path / "spec.yaml").write_text(PLUGIN_SPEC.replace("OP", op))
    done = graphtool_capped(tmp_path, "run", "spec.yaml", "--plugin", "ops.py", "-q")
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines()[0] == f"spec.yaml:6:5: error: {op}: plugin ops.py: {message}"


def test_a_plugin_calling_exit_while_loading_is_a_failure_not_an_internal_error(tmp_path):
    (tmp_path / "ops.py").write_text("import sys\nsys.exit('bye')\n")
    done = graphtool_capped(tmp_path, "run", str(SEED_STATIC), "--plugin", "ops.py", "-q")
    assert (done.returncode, done.stderr) == (
        1, "error: ops.py: the plugin called exit ('bye') while loading\n")


@pytest.mark.parametrize("command", ["run", "check", "viz", "train", "bench"])
def test_a_negative_seed_is_a_usage_error(command):
    from typer.testing import CliRunner

    from cli.app import app

    result = CliRunner().invoke(app, [command, str(SEED_STATIC), "--seed", "-1"])
    assert result.exit_code == 2
    assert "--seed" in result.stderr and "Traceback" not in result.stderr


def test_set_with_an_over_long_integer_exits_65(tmp_path):
    done = graphtool_capped(tmp_path, "run", str(SEED_STATIC), "--set",
                            "params.hidden=" + "9" * 4301, "-q")
    assert done.returncode == 65
    assert done.stderr.startswith("--set:1:15: error: --set params.hidden: an integer of 4,301 "
                                  "digits is too long to be read as a number")


# ------------------------------------------------------------------ 8.13: the mis-indented line

@pytest.mark.parametrize(("text", "where", "message"), [
    ("graphtool: 1\ninputs:\n   x: {random: normal, shape: [3, 4]}\n"
     "  t: {random: randint, high: 2, shape: [3]}\n  u: {zeros: [3]}\ngraph:\n  - relu\n",
     "model.yaml:3:4", "invalid YAML: line 3 is indented 3 spaces, but line 4 of the same "
     "block 2"),
    ("graphtool: 1\ninputs:\n  x: {random: normal, shape: [3, 4]}\ngraph:\n   - relu\n"
     "  - tanh\n", "model.yaml:5:4", "invalid YAML: line 5 is indented 3 spaces, but line 6 of "
     "the same block 2"),
])
def test_an_indentation_error_points_at_the_odd_line(text, where, message):
    error = the_error(text)
    assert (at(error), error.message) == (where, message)
    assert error.hint.startswith("indent it 2 spaces, like line")


@pytest.mark.parametrize(("text", "where"), [
    # the odd line comes second: PyYAML's line is the right one, and stays
    ("graphtool: 1\ninputs:\n  x: {random: normal, shape: [3, 4]}\n   t: {zeros: [3]}\n"
     "graph: [relu]\n", "model.yaml:4:4"),
    # a nested block at the usual step, then an odd line: the odd line is the problem line
    ("graphtool: 1\ninputs:\n  x:\n    random: normal\n    shape: [3, 4]\n   t:\n"
     "    zeros: [3]\ngraph: [relu]\n", "model.yaml:6:4"),
])
def test_an_indentation_error_on_the_problem_line_stays_there(text, where):
    assert at(the_error(text)) == where
