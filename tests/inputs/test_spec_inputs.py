"""graphcore.inputs.make: InputSpecs -> numpy arrays (DESIGN sections 4 and 8)."""

import io
import time
import zipfile
import zlib

import numpy as np
import pytest

from graphcore.errors import SpecError, UnreadableFileError
from graphcore.inputs.make import input_rng, make_input, make_inputs
from graphcore.language.syntax import InputSpec
from graphcore.language.yaml_source import Loc, SourceText

TEXT = "inputs:\n  x: {random: uniform, shape: [3, 4]}\n  d: {file: data.npz, key: x}\n"
SOURCE = SourceText(TEXT, "model.yaml")
LOC = SOURCE.loc(2, 6, 30)


def spec(name="x", source="random", **options) -> InputSpec:
    options.setdefault("loc", LOC)
    if source == "random":
        options.setdefault("distribution", "normal")
    if source in ("random", "zeros", "ones"):
        options.setdefault("shape", (3, 4))
    return InputSpec(name=name, source=source, **options)


def file_spec(path, name="d", **options) -> InputSpec:
    return spec(name, "file", path=str(path), **options)


def save_npy(path, array, **kwargs):
    np.save(path, array, **kwargs)
    return path


# ---------------------------------------------------------------- seeds and determinism

def test_input_rng_is_keyed_by_seed_and_crc32_of_the_name():
    expected = np.random.default_rng(np.random.SeedSequence([7, zlib.crc32(b"x")])).random(5)
    assert np.array_equal(input_rng(7, "x").random(5), expected)
    assert not np.array_equal(input_rng(7, "y").random(5), expected)
    assert not np.array_equal(input_rng(8, "x").random(5), expected)


@pytest.mark.parametrize("seed", [-1, 1.5, True, "0"])
def test_input_rng_refuses_a_bad_seed(seed):
    with pytest.raises(ValueError, match="seed"):
        input_rng(seed, "x")


def test_same_seed_gives_same_values_and_different_seeds_differ():
    inputs = {"x": spec("x"), "t": spec("t", distribution="randint", high=10, dtype="int32")}
    first, again = make_inputs(inputs, seed=3), make_inputs(inputs, seed=3)
    other = make_inputs(inputs, seed=4)
    for name in inputs:
        assert np.array_equal(first[name], again[name])
    assert not np.array_equal(first["x"], other["x"])


def test_an_input_does_not_depend_on_the_others():
    alone = make_inputs({"x": spec("x")}, seed=0)["x"]
    crowded = make_inputs({"a": spec("a"), "b": spec("b", distribution="uniform"),
                           "x": spec("x"), "z": spec("z", "zeros")}, seed=0)
    assert np.array_equal(alone, crowded["x"])
    assert not np.array_equal(crowded["a"], crowded["x"])  # same spec, other name


# ---------------------------------------------------------------- distributions and dtypes

def test_default_dtype_is_float32_and_dtype_is_honoured():
    assert make_input(spec(), 0).dtype == np.float32
    assert make_input(spec(dtype="float64"), 0).dtype == np.float64
    assert make_input(spec(source="zeros", dtype="int64"), 0).dtype == np.int64
    assert make_input(spec(source="ones", dtype="bool"), 0).dtype == np.bool_


def test_zeros_and_ones():
    assert np.array_equal(make_input(spec(source="zeros"), 0), np.zeros((3, 4), np.float32))
    assert np.array_equal(make_input(spec(source="ones", shape=(2,)), 0), [1, 1])


def test_normal_has_the_asked_mean_and_std():
    values = make_input(spec(shape=(100_000,), mean=5.0, std=2.0), 0)
    assert abs(values.mean() - 5.0) < 0.05 and abs(values.std() - 2.0) < 0.05


def test_uniform_stays_in_the_half_open_range():
    values = make_input(spec(shape=(100_000,), distribution="uniform", low=-2, high=3), 0)
    assert values.min() >= -2 and values.max() < 3 and values.max() > 2.9
    narrow = make_input(spec(shape=(200_000,), distribution="uniform", dtype="float16"), 0)
    assert narrow.dtype == np.float16 and narrow.max() < 1  # rounding never reaches high


def test_randint_is_int32_in_range_and_covers_it():
    values = make_input(spec(shape=(10_000,), distribution="randint", low=-1, high=3,
                             dtype="int32"), 0)
    assert values.dtype == np.int32
    assert sorted(np.unique(values)) == [-1, 0, 1, 2]
    as_float = make_input(spec(shape=(10_000,), distribution="randint", low=-1, high=3), 0)
    assert as_float.dtype == np.float32 and np.array_equal(as_float, values)


@pytest.mark.parametrize("options, message", [
    ({"distribution": "randint"}, "needs 'high'"),
    ({"distribution": "uniform", "low": 2, "high": 1}, "low < high"),
    ({"distribution": "randint", "low": 0.2, "high": 0.9}, "no integer"),
    ({"distribution": "randint", "high": 2**40, "dtype": "int32"}, "do not fit in int32"),
    ({"distribution": "normal", "std": -1.0}, "std"),
    ({"distribution": "normal", "dtype": "int32"}, "draws real numbers"),
    ({"distribution": "norml"}, "did you mean 'normal'"),
    ({"dtype": "float"}, "dtype must be one of"),
    ({"shape": None}, "needs a shape"),
    ({"shape": (None, 3)}, "null size needs 'lengths'"),
])
def test_bad_random_options_are_located_errors(options, message):
    with pytest.raises(SpecError, match=message) as info:
        make_input(spec(**options), 0)
    assert (info.value.file, info.value.line, info.value.col) == ("model.yaml", 2, 6)
    assert info.value.source_line == "  x: {random: uniform, shape: [3, 4]}"


# ---------------------------------------------------------------- lengths

def test_lengths_give_a_list_drawn_in_order_from_the_inputs_rng():
    s = spec("s", shape=(None, 8), lengths=(5, 3, 7))
    examples = make_input(s, 1)
    assert isinstance(examples, list) and [e.shape for e in examples] == [(5, 8), (3, 8), (7, 8)]
    rng = input_rng(1, "s")
    for example, length in zip(examples, (5, 3, 7), strict=True):
        assert np.array_equal(example, rng.normal(0.0, 1.0, (length, 8)).astype(np.float32))


def test_zeros_with_lengths():
    examples = make_input(spec("s", "zeros", shape=(None, 2), lengths=(1, 4)), 0)
    assert [e.shape for e in examples] == [(1, 2), (4, 2)] and not any(e.any() for e in examples)


def test_lengths_need_a_null_first_axis():
    with pytest.raises(SpecError, match=r"shape \[null, ...\]"):
        make_input(spec(shape=(3, 4), lengths=(2,)), 0)


# ---------------------------------------------------------------- size limits

def test_huge_shape_is_refused_before_allocation():
    start = time.perf_counter()
    with pytest.raises(SpecError, match="10,000,000,000 elements, over the limit"):
        make_input(spec(shape=(100_000, 100_000)), 0)
    with pytest.raises(SpecError, match="over the limit"):
        make_input(spec(source="zeros", shape=(100_000, 100_000)), 0)
    assert time.perf_counter() - start < 0.5


def test_size_limit_is_per_example_and_in_all_with_lengths():
    s = spec("s", shape=(None, 10), lengths=(3, 4))
    assert len(make_input(s, 0, max_elements=70)) == 2
    with pytest.raises(SpecError, match="per example"):
        make_input(s, 0, max_elements=39)
    with pytest.raises(SpecError, match="70 elements in its 2 examples, over the limit of 69"):
        make_input(s, 0, max_elements=69)


def test_npy_header_over_the_limit_is_refused_without_reading_data(tmp_path):
    path = tmp_path / "huge.npy"
    with open(path, "wb") as handle:  # a header claiming 10^12 floats, and no data at all
        np.lib.format.write_array_header_1_0(
            handle, {"descr": "<f8", "fortran_order": False, "shape": (10**6, 10**6)})
    with pytest.raises(SpecError, match="1,000,000,000,000 elements, over the limit"):
        make_input(file_spec(path), 0)


def test_csv_over_the_limit_is_refused(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text("1,2\n" * 6)
    assert make_input(file_spec(path), 0, max_elements=12).shape == (6, 2)
    with pytest.raises(SpecError, match="over 11 numbers"):
        make_input(file_spec(path), 0, max_elements=11)


# ---------------------------------------------------------------- files

def test_npy_is_read_relative_to_the_folder_and_converted(tmp_path):
    data = np.arange(12, dtype=np.float64).reshape(3, 4)
    save_npy(tmp_path / "data.npy", data)
    array = make_input(file_spec("data.npy"), 0, folder=tmp_path)
    assert array.dtype == np.float32 and np.array_equal(array, data)
    as_int = make_input(file_spec("data.npy", dtype="int64"), 0, folder=tmp_path)
    assert as_int.dtype == np.int64 and np.array_equal(as_int, data)


def test_npy_big_endian_and_fortran_order_read_back(tmp_path):
    data = np.asfortranarray(np.arange(6, dtype=">i4").reshape(2, 3))
    array = make_input(file_spec(save_npy(tmp_path / "f.npy", data), dtype="int32"), 0)
    assert array.dtype == np.dtype("int32") and np.array_equal(array, data)


def test_npz_key_and_its_did_you_mean(tmp_path):
    np.savez(tmp_path / "data.npz", x=np.ones((2, 2)), weights=np.zeros(3))
    array = make_input(file_spec("data.npz", key="weights"), 0, folder=tmp_path)
    assert np.array_equal(array, np.zeros(3, np.float32))
    with pytest.raises(SpecError, match=r"has no array 'weight' \(it holds: x, weights\)") as info:
        make_input(file_spec("data.npz", key="weight"), 0, folder=tmp_path)
    assert info.value.hint == "did you mean 'weights'?"


def test_compressed_npz(tmp_path):
    np.savez_compressed(tmp_path / "c.npz", x=np.arange(4))
    assert np.array_equal(make_input(file_spec(tmp_path / "c.npz", key="x"), 0), np.arange(4))


def test_shape_mismatch_names_both_shapes(tmp_path):
    path = save_npy(tmp_path / "data.npy", np.zeros((3, 4)))
    with pytest.raises(SpecError, match=r"shape \[3, 4\], but the spec declares shape \[4, 3\]"):
        make_input(file_spec(path, shape=(4, 3)), 0)
    assert make_input(file_spec(path, shape=(3, 4)), 0).shape == (3, 4)


def test_csv_with_header_and_delimiter(tmp_path):
    path = tmp_path / "table.csv"
    path.write_text("a;b;c\nunits;m;s\n1;2;3\n\n# a comment\n4;5;6\n")
    array = make_input(file_spec(path, delimiter=";", skip_header=2), 0)
    assert array.dtype == np.float32 and np.array_equal(array, [[1, 2, 3], [4, 5, 6]])


def test_csv_one_row_is_2d_unless_the_spec_asks_for_a_vector(tmp_path):
    path = tmp_path / "row.csv"
    path.write_text("1,2,3\n")
    assert make_input(file_spec(path), 0).shape == (1, 3)
    assert make_input(file_spec(path, shape=(3,)), 0).shape == (3,)


@pytest.mark.parametrize("text, message", [
    ("1,2\n3,abc\n", "could not convert string 'abc'"),
    ("1,2\n3\n", "cannot read"),
    ("# only a comment\n", "holds no data"),
])
def test_bad_csv_is_a_located_error(tmp_path, text, message):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(SpecError, match=message) as info:
        make_input(file_spec(path), 0)
    assert (info.value.file, info.value.line) == ("model.yaml", 2)


def test_csv_non_integers_refused_for_an_integer_dtype(tmp_path):
    path = tmp_path / "f.csv"
    path.write_text("1.5,2\n")
    with pytest.raises(SpecError, match="not integers"):
        make_input(file_spec(path, dtype="int32"), 0)
    path.write_text("1,2\n")
    assert make_input(file_spec(path, dtype="int32"), 0).dtype == np.int32


def test_values_that_do_not_fit_the_dtype_are_refused(tmp_path):
    with pytest.raises(SpecError, match="too large for float16"):
        make_input(file_spec(save_npy(tmp_path / "a.npy", np.array([1e6])), dtype="float16"), 0)
    with pytest.raises(SpecError, match="outside int32's range"):
        make_input(file_spec(save_npy(tmp_path / "b.npy", np.array([2**40])), dtype="int32"), 0)


def test_missing_file_is_file_not_found_naming_input_and_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="input 'd': file not found") as info:
        make_input(file_spec("nope.npy"), 0, folder=tmp_path)
    assert str(tmp_path / "nope.npy") in str(info.value)
    assert not isinstance(info.value, SpecError)


def test_pickled_object_array_is_refused_not_unpickled(tmp_path):
    path = save_npy(tmp_path / "obj.npy", np.array([{"a": 1}, None], dtype=object),
                    allow_pickle=True)
    with pytest.raises(SpecError, match="Python objects") as info:
        make_input(file_spec(path), 0)
    assert info.value.line == 2


@pytest.mark.parametrize("write, message", [
    (lambda p: np.save(p, np.array(["a", "b"])), "not numbers"),
    (lambda p: np.save(p, np.zeros(2, dtype=[("a", "<i4")])), "not numbers"),
    (lambda p: np.save(p, np.ones(2, dtype=np.complex64)), "not numbers"),
    (lambda p: p.write_bytes(b"1,2,3\n"), "is not an .npy file"),
])
def test_non_numeric_or_foreign_npy_is_refused(tmp_path, write, message):
    path = tmp_path / "x.npy"
    write(path)
    with pytest.raises(SpecError, match=message):
        make_input(file_spec(path), 0)


def test_truncated_npy_and_corrupt_npz_are_located_errors(tmp_path):
    path = save_npy(tmp_path / "t.npy", np.arange(100.0))
    path.write_bytes(path.read_bytes()[:-8])
    with pytest.raises(SpecError, match="t.npy is cut short: its header declares 800 bytes of "
                       "data for shape \\(100,\\), the file holds 792"):
        make_input(file_spec(path), 0)
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(SpecError, match="bad.npz is not an .npz file"):
        make_input(file_spec(bad, key="x"), 0)


def test_a_folder_or_unknown_suffix_is_refused(tmp_path):
    (tmp_path / "dir.npy").mkdir()
    with pytest.raises(UnreadableFileError, match="dir.npy is a folder, not a regular file"):
        make_input(file_spec(tmp_path / "dir.npy"), 0)
    with pytest.raises(SpecError, match=r"must be an .npy, .npz or .csv file"):
        make_input(file_spec(tmp_path / "data.txt"), 0)


# ---------------------------------------------------------------- stdin

def npy_bytes(array) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def test_stdin_npy_and_csv():
    data = np.arange(6.0).reshape(2, 3)
    from_npy = make_input(spec("s", "stdin", format="npy"), 0, stdin=io.BytesIO(npy_bytes(data)))
    from_csv = make_input(spec("s", "stdin", format="csv"), 0,
                          stdin=io.BytesIO(b"0,1,2\n3,4,5\n"))
    assert np.array_equal(from_npy, data) and np.array_equal(from_csv, data)
    assert from_npy.dtype == from_csv.dtype == np.float32


def test_stdin_in_the_wrong_format_says_so():
    with pytest.raises(SpecError, match="stdin is not an .npy file") as info:
        make_input(spec("s", "stdin", format="npy"), 0, stdin=io.BytesIO(b"1,2\n"))
    assert "stdin: csv" in info.value.hint


class CountingStream(io.BytesIO):
    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.reads = 0

    def read(self, size=-1):
        self.reads += 1
        return super().read(size)


def test_stdin_is_read_once_and_bounded():
    counting = CountingStream(b"1,2\n3,4\n")
    arrays = make_inputs({"x": spec("x"), "s": spec("s", "stdin", format="csv")}, 0,
                         stdin=counting)
    # one pass, in chunks (memory follows what stdin holds): a chunk, then the end
    assert counting.reads == 2 and arrays["s"].shape == (2, 2)
    stream = io.BytesIO(b"1,2\n" * 20_000)  # 80,000 bytes: over 0 * 32 + 64 KiB
    with pytest.raises(SpecError, match="stdin holds over"):
        make_input(spec("s", "stdin", format="csv"), 0, stdin=stream, max_elements=0)


def test_only_one_input_may_read_stdin():
    inputs = {"a": spec("a", "stdin", format="csv"), "b": spec("b", "stdin", format="csv")}
    with pytest.raises(SpecError, match="input 'b' reads stdin, but input 'a' already does"):
        make_inputs(inputs, 0, stdin=io.BytesIO(b"1\n"))
    with pytest.raises(SpecError, match="only one input") as info:
        make_inputs({"a": inputs["a"], "x": spec("x")}, 0, overrides={"x": "-"},
                    stdin=io.BytesIO(b"1\n"))
    assert info.value.file == "--input"


# ---------------------------------------------------------------- overrides

def test_override_path_is_relative_to_the_working_directory(tmp_path, monkeypatch):
    (tmp_path / "specs").mkdir()
    save_npy(tmp_path / "batch.npy", np.full((3, 4), 7.0))
    save_npy(tmp_path / "specs" / "batch.npy", np.zeros((3, 4)))
    monkeypatch.chdir(tmp_path)
    arrays = make_inputs({"x": spec("x"), "y": spec("y")}, 0, folder="specs",
                         overrides={"x": "batch.npy"})
    assert np.all(arrays["x"] == 7) and arrays["x"].dtype == np.float32
    assert np.array_equal(arrays["y"], make_input(spec("y"), 0))


def test_override_must_match_the_declared_shape(tmp_path):
    path = save_npy(tmp_path / "batch.npy", np.zeros((5, 4)))
    with pytest.raises(SpecError, match=r"\[5, 4\], but the spec declares shape \[3, 4\]") as info:
        make_input(spec("x"), 0, override=str(path))
    assert (info.value.file, info.value.line, info.value.col) == ("--input", 1, 1)


def test_override_of_an_input_with_lengths_is_one_example(tmp_path):
    path = save_npy(tmp_path / "seq.npy", np.ones((9, 8)))
    examples = make_input(spec("s", shape=(None, 8), lengths=(2, 3)), 0, override=str(path))
    assert isinstance(examples, list) and [e.shape for e in examples] == [(9, 8)]


def test_override_npz_needs_a_key_or_a_single_array(tmp_path):
    np.savez(tmp_path / "one.npz", anything=np.ones((3, 4)))
    np.savez(tmp_path / "two.npz", a=np.ones((3, 4)), b=np.ones((3, 4)))
    assert make_input(spec(), 0, override=str(tmp_path / "one.npz")).shape == (3, 4)
    with pytest.raises(SpecError, match=r"holds 2 arrays \(a, b\)"):
        make_input(spec(), 0, override=str(tmp_path / "two.npz"))


def test_override_from_stdin_is_recognized_by_its_bytes():
    data = np.ones((3, 4))
    assert np.array_equal(make_input(spec(), 0, override="-", stdin=io.BytesIO(npy_bytes(data))),
                          data)
    csv = make_input(spec(shape=(2,)), 0, override="-", stdin=io.BytesIO(b"4,5\n"))
    assert np.array_equal(csv, [4, 5])
    buffer = io.BytesIO()
    np.savez(buffer, x=data)
    assert np.array_equal(make_input(spec(), 0, override="-", stdin=io.BytesIO(buffer.getvalue())),
                          data)


def test_override_for_an_unknown_input_is_an_error_with_did_you_mean():
    with pytest.raises(SpecError, match="the spec has no input 'xs'") as info:
        make_inputs({"x": spec("x")}, 0, overrides={"xs": "a.npy"})
    error = info.value
    assert (error.file, error.line, error.col) == ("--input", 1, 1)
    assert error.hint == "did you mean 'x'?"


def test_missing_override_file_is_file_not_found(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match="input 'x': file not found: gone.csv"):
        make_inputs({"x": spec("x")}, 0, overrides={"x": "gone.csv"})


def test_inputs_keep_their_order_and_loc_without_a_source_text():
    loc = Loc("m.yaml", 4, 3)
    with pytest.raises(SpecError) as info:
        make_input(InputSpec("q", "zeros", loc), 0)
    assert info.value.headline() == "m.yaml:4:3: error: input 'q' needs a shape"
    arrays = make_inputs({"b": spec("b", "ones"), "a": spec("a", "zeros")}, 0)
    assert list(arrays) == ["b", "a"]


def test_no_zip_member_is_read_past_its_header_when_too_big(tmp_path):
    path = tmp_path / "big.npz"
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f4", "fortran_order": False, "shape": (10**5, 10**5)})
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("x.npy", header.getvalue())
    with pytest.raises(SpecError, match="big.npz, array 'x' holds 10,000,000,000 elements"):
        make_input(file_spec(path, key="x"), 0)
