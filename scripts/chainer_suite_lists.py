"""Write the lists beside ``chainer_suite/conftest.py``.

    python scripts/chainer_suite_lists.py reference PASSED.txt [PASSED.txt ...]
        reference_passes.txt: the tests that passed when Chainer 7.8.1's suite ran on real
        Chainer (numpy 1.26; chainer_suite/conftest.py says how), from files of the node ids
        that passed, one a line (a newline in an id written as \\n).
    python scripts/chainer_suite_lists.py manifest
        known_failures.txt: the reference tests that did not pass in the last run of
        ``pytest chainer_suite`` (its outcomes.json), a whole file, class or parameterized case
        a line where none of it passed. After a run of part of the suite (a folder or a file),
        only that part's entries change: the others keep what the manifest said.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

SUITE = Path(__file__).resolve().parents[1] / "chainer_suite"
sys.path.insert(0, str(SUITE))

from suite_keys import entries_for, key, read_list  # noqa: E402

HEADER = {
    "reference_passes.txt": "# The tests of Chainer 7.8.1's suite (chainer_tests/) that pass on "
                            "real Chainer 7.8.1\n# (numpy 1.26.4, Python 3.11, CPU); written by "
                            "scripts/chainer_suite_lists.py reference.\n",
    "known_failures.txt": "# The reference tests graphcore does not pass yet: a file, a class "
                          "(every case), a case or\n# a test a line. Written by "
                          "scripts/chainer_suite_lists.py manifest; it only shrinks.\n",
}


def passed_ids(path: Path) -> set[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return {key(line.replace("\\n", "\n")) for line in lines if line.strip()}


def compressed(failing: list[str], reference: list[str]) -> list[str]:
    """``failing`` as manifest entries: a file, class or case where all of it fails."""
    failing_set = set(failing)
    by_file: dict[str, list[str]] = defaultdict(list)
    for test_key in reference:
        by_file[test_key.split("::", 1)[0]].append(test_key)
    entries = []
    for file, keys in sorted(by_file.items()):
        if all(k in failing_set for k in keys):
            entries.append(file)
            continue
        by_class: dict[str, list[str]] = defaultdict(list)
        for k in keys:
            names = k.split("::")
            by_class[names[1].split("_param_", 1)[0] if len(names) > 2 else k].append(k)
        for cls, class_keys in sorted(by_class.items()):
            if all(k in failing_set for k in class_keys):
                entries.append(cls if cls in class_keys else f"{file}::{cls}")
                continue
            by_case: dict[str, list[str]] = defaultdict(list)
            for k in class_keys:
                by_case[k.rsplit("::", 1)[0]].append(k)
            for case, case_keys in sorted(by_case.items()):
                if all(k in failing_set for k in case_keys):
                    entries.append(case)
                else:
                    entries.extend(sorted(k for k in case_keys if k in failing_set))
    return entries


def write(name: str, lines: list[str]) -> None:
    (SUITE / name).write_text(HEADER[name] + "".join(f"{line}\n" for line in lines))
    print(f"wrote chainer_suite/{name}: {len(lines):,} lines")


def main(argv: list[str]) -> int:
    if argv[:1] == ["reference"] and len(argv) > 1:
        passed = set().union(*(passed_ids(Path(p)) for p in argv[1:]))
        write("reference_passes.txt", sorted(passed))
        return 0
    if argv == ["manifest"]:
        reference = read_list(SUITE / "reference_passes.txt")
        outcomes = json.loads((SUITE / "outcomes.json").read_text())
        passed = set(outcomes["passed"])
        counted = set(outcomes.get("counted", reference))
        listed = set(read_list(SUITE / "known_failures.txt"))
        failing = [k for k in reference
                   if (k not in passed if k in counted
                       else any(e in listed for e in entries_for(k)))]
        write("known_failures.txt", compressed(failing, reference))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
