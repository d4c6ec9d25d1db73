"""The kill ledger: mutmut's kills kept in a committed file, so that a run on a new machine (a
clean CI clone, the next session's) tries only the mutants no earlier run killed.

    {"mutmut": "3.8.1",
     "files": {"src/memref/jobs.py": {"x_claim_stage1": {"hash": "a1b2c3d4e5f6",
                                                          "killed": [1, 2, 5]}}}}

A function's kills count only while its hash (mutmut's digest of the function's syntax tree)
is the one recorded: a changed function is tried again from scratch. Kills outlive changes to
the suite, as in mutmut's own cache (checks are added, not weakened). Survivors are never
kept: whether a mutant survives depends on the whole suite of the day. A ledger written by
another mutmut release is not used (its numbering of mutants may differ). Numbering also
assumes that the same syntax tree gets the same mutants: a `# pragma: no mutate` comment, which
the tree does not hold, would shift it (memref has none).
"""

from __future__ import annotations

import importlib.metadata
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memconform import resources
from memconform.mutation.workspace import KILLED

FILE = Path("mutation") / "ledger.json"
SEPARATOR = "__mutmut_"


class LedgerError(ValueError):
    """A ledger file that cannot be used."""


def default_file() -> Path:
    return resources.doc(FILE.as_posix())


def mutmut_version() -> str:
    return importlib.metadata.version("mutmut")


def load(path: Path) -> dict[str, Any]:
    """The ledger at `path` (an empty one when the file does not exist)."""
    if not path.exists():
        return {"mutmut": mutmut_version(), "files": {}}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise LedgerError(f"{path}: not JSON: {exc}") from exc
    if not isinstance(data, dict) or set(data) != {"mutmut", "files"} \
            or not isinstance(data["mutmut"], str) or not isinstance(data["files"], dict):
        raise LedgerError(f"{path}: must be an object with exactly the keys mutmut (a string) "
                          "and files (an object)")
    for rel, functions in data["files"].items():
        if not isinstance(functions, dict):
            raise LedgerError(f"{path}: {rel}: must be an object of functions")
        for name, entry in functions.items():
            if (not isinstance(entry, dict) or set(entry) != {"hash", "killed"}
                    or not isinstance(entry["hash"], str)
                    or not isinstance(entry["killed"], list)
                    or not all(isinstance(n, int) and not isinstance(n, bool) and n > 0
                               for n in entry["killed"])):
                raise LedgerError(f"{path}: {rel} {name}: must be {{hash: str, killed: "
                                  "[positive int]}}")
    return data


def _split(key: str) -> tuple[str, int]:
    """`memref.jobs.x_claim__mutmut_12` -> ('x_claim', 12)."""
    head, _, number = key.rpartition(SEPARATOR)
    return head.rpartition(".")[2], int(number)


def _current(work: Path, rel: str) -> dict[str, str]:
    """mutmut's hash of every function of the work copy of `rel`, as the source is now."""
    from mutmut.mutation.file_mutation import compute_function_hashes

    return compute_function_hashes((work / rel).read_text(encoding="utf-8"))


def _module(rel: str) -> str:
    """`src/memref/tools/notes.py` -> `memref.tools.notes`."""
    return rel.removeprefix("src/").removesuffix(".py").replace("/", ".").removesuffix(
        ".__init__")


def seed(work: Path, ledger: dict[str, Any], in_scope: Callable[[str], bool]) -> int:
    """Mark the ledger's kills in mutmut's verdict files in `work` for every file of the run
    (`in_scope`) and every function whose hash in the work copy of the source is the
    ledger's; how many verdicts were set. Verdicts mutmut has for the same code stay as they
    are; those it has for an older version of such a function are dropped (tried again)."""
    if ledger["mutmut"] != mutmut_version():
        return 0
    seeded = 0
    for rel, functions in ledger["files"].items():
        if not in_scope(rel) or not (work / rel).is_file():
            continue
        current = _current(work, rel)
        meta_path = work / "mutants" / f"{rel}.meta"
        if meta_path.exists():
            data = json.loads(meta_path.read_text(encoding="utf-8"))
        else:
            data = {"exit_code_by_key": {}, "hash_by_function_name": {},
                    "durations_by_key": {}, "estimated_durations_by_key": {}}
        hashes, codes = data["hash_by_function_name"], data["exit_code_by_key"]
        module = _module(rel)
        for name, entry in functions.items():
            if current.get(name) != entry["hash"]:
                continue
            if hashes.get(name, entry["hash"]) != entry["hash"]:
                # the cache's verdicts are of an older version of this function
                for key in [k for k in codes if _split(k)[0] == name]:
                    codes[key] = None
            hashes[name] = entry["hash"]
            for number in entry["killed"]:
                key = f"{module}.{name}{SEPARATOR}{number}"
                if codes.get(key) is None:
                    codes[key] = 1
                    seeded += 1
        meta_path.parent.mkdir(parents=True, exist_ok=True)
        meta_path.write_text(json.dumps(data, indent=4), encoding="utf-8")
    return seeded


def record(work: Path, ledger: dict[str, Any],
           in_scope: Callable[[str], bool]) -> dict[str, Any]:
    """The ledger with the kills in `work`. For each file of the run (`in_scope`), every
    function of the source as it is now keeps the kills recorded for exactly that code, in
    the ledger or in mutmut's verdicts (functions that changed or went away drop out);
    files outside the run stay as the ledger has them. A verdict file that cannot be read
    (a run killed while writing it) adds nothing."""
    same = ledger["mutmut"] == mutmut_version()
    files = dict(ledger["files"]) if same else {}
    sources = {p.relative_to(work).as_posix() for p in (work / "src").rglob("*.py")}
    for rel in sorted(r for r in sources if in_scope(r)):
        current = _current(work, rel)
        killed: dict[str, set[int]] = {}
        for name, entry in (ledger["files"].get(rel, {}) if same else {}).items():
            if current.get(name) == entry["hash"]:
                killed.setdefault(name, set()).update(entry["killed"])
        meta = work / "mutants" / f"{rel}.meta"
        try:
            data = json.loads(meta.read_text(encoding="utf-8")) if meta.exists() else {}
        except (OSError, ValueError):
            data = {}
        hashes = data.get("hash_by_function_name", {})
        for key, code in data.get("exit_code_by_key", {}).items():
            name, number = _split(key)
            if code in KILLED and name in current and hashes.get(name) == current[name]:
                killed.setdefault(name, set()).add(number)
        entries = {name: {"hash": current[name], "killed": sorted(numbers)}
                   for name, numbers in sorted(killed.items()) if numbers}
        if entries:
            files[rel] = entries
        else:
            files.pop(rel, None)
    return {"mutmut": mutmut_version(), "files": dict(sorted(files.items()))}


def save(path: Path, ledger: dict[str, Any]) -> None:
    """Write the ledger (one function per line, so that a diff shows what changed)."""
    lines = ["{", f'"mutmut": {json.dumps(ledger["mutmut"])},', '"files": {']
    files = list(ledger["files"].items())
    for i, (rel, functions) in enumerate(files):
        lines.append(f"{json.dumps(rel)}: {{")
        items = list(functions.items())
        for j, (name, entry) in enumerate(items):
            comma = "," if j < len(items) - 1 else ""
            lines.append(f"  {json.dumps(name, ensure_ascii=False)}: "
                         f"{json.dumps(entry, separators=(', ', ': '))}{comma}")
        lines.append("}" + ("," if i < len(files) - 1 else ""))
    lines += ["}", "}"]
    tmp = path.with_suffix(".tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tmp.replace(path)
