"""run_folders: a new numbered folder per run, allocated race-free, runs/latest the newest."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest

from graphcore.commands.train import run_folders
from graphcore.commands.train.run_folders import (
    LatestDamaged,
    NoRunError,
    RunNotFound,
    discard_unused,
    find_run,
    new_run,
)


def test_runs_are_numbered_from_one_and_the_latest_is_the_newest(tmp_path):
    made = [new_run(tmp_path) for _ in range(3)]
    assert [r.number for r in made] == [1, 2, 3]
    assert [r.folder for r in made] == [tmp_path / "runs" / str(n) for n in (1, 2, 3)]
    assert all(r.folder.is_dir() and not any(r.folder.iterdir()) for r in made)
    assert (tmp_path / "runs" / "latest").read_text() == "3\n"
    assert find_run(tmp_path) == made[-1] and find_run(tmp_path, 1) == made[0]


def test_a_number_taken_by_hand_is_skipped(tmp_path):
    new_run(tmp_path)
    (tmp_path / "runs" / "2").mkdir()
    (tmp_path / "runs" / "notes").mkdir()  # not a run: never counted
    assert new_run(tmp_path).number == 3


def _allocate(args):
    folder, count = args
    return [new_run(folder).number for _ in range(count)]


@pytest.mark.slow  # eight processes
def test_concurrent_allocations_never_share_a_folder(tmp_path):
    with multiprocessing.get_context("spawn").Pool(8) as pool:
        numbers = [n for chunk in pool.map(_allocate, [(tmp_path, 10)] * 8) for n in chunk]
    assert sorted(numbers) == list(range(1, 81))
    assert (tmp_path / "runs" / "latest").read_text() == "80\n"


def test_no_run_a_missing_run_and_a_damaged_latest_are_typed_errors(tmp_path):
    with pytest.raises(NoRunError, match="no training run in .*runs yet"):
        find_run(tmp_path)
    with pytest.raises(NoRunError):
        find_run(tmp_path, 1)
    for _ in range(4):
        new_run(tmp_path)
    (tmp_path / "runs" / "3").rmdir()
    with pytest.raises(RunNotFound, match=r"no run 3 in .* \(runs there: 1-2, 4\)"):
        find_run(tmp_path, 3)
    (tmp_path / "runs" / "latest").write_text("3\n")
    with pytest.raises(LatestDamaged, match="names run 3, which is not there"):
        find_run(tmp_path)
    (tmp_path / "runs" / "latest").write_text("three")
    with pytest.raises(LatestDamaged, match="names 'three'"):
        find_run(tmp_path)
    (tmp_path / "runs" / "latest").unlink()  # runs copied without it: the highest
    assert find_run(tmp_path).number == 4


def test_an_unused_run_is_taken_back_and_latest_names_the_run_before(tmp_path):
    first = new_run(tmp_path)
    (first.folder / "train.csv").write_text("kind\n")
    second = new_run(tmp_path)
    (second.folder / ".lock").write_text("123\n")  # only its lock: nothing written
    assert discard_unused(second)
    assert not second.folder.exists()
    assert (tmp_path / "runs" / "latest").read_text() == "1\n"
    assert not discard_unused(first) and first.folder.is_dir()  # it holds a file
    assert new_run(tmp_path).number == 2


def test_ranges_are_said_briefly():
    assert run_folders.RunNotFound(Path("r"), 9, [1, 2, 3, 5, 7, 8]).args[0] == \
        "no run 9 in r (runs there: 1-3, 5, 7-8)"
