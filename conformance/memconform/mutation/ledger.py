"""The kill ledger: mutmut's kills kept in a committed file, so that a run on a new machine (a
clean CI clone, the next session's) tries only the mutants no earlier run killed.

    {"mutmut": "3.8.1",
     "files": {"src/memref/jobs.py": {"x_claim_stage1": {"hash": "a1b2c3d4e5f6",
                                                          "killed": [1, 2, 5]}}}}

A function's kills count only while its hash (mutmut's digest of the function's syntax tree)
is the one recorded: a changed function is tried again from scratch. Kills outlive changes to
the suite, as in mutmut's own cache (checks are added, not weakened). Survivors are never
kept: whether a mutant survives depends on the whole suite of the day. A ledger written by
another mutmut release is not used (its numbering of mutants may differ).
"""

from __future__ import annotations

import importlib.metadata
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memconform import resources

FILE = Path("mutation") / "ledger.json"
KILLED = (1, 3)
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
    if not isinstance(data, dict) or set(data) != {"mutmut", "files"}:
        raise LedgerError(f"{path}: must be an object with exactly the keys mutmut, files")
    for rel, functions in data["files"].items():
        for name, entry in functions.items():
            if (not isinstance(entry, dict) or set(entry) != {"hash", "killed"}
                    or not isinstance(entry["hash"], str)
                    or not all(isinstance(n, int) and n > 0 for n in entry["killed"])):
                raise LedgerError(f"{path}: {rel} {name}: must be {{hash: str, killed: "
                                  "[positive int]}}")
    return data


def _split(key: str) -> tuple[str, int]:
    """`memref.jobs.x_claim__mutmut_12` -> ('x_claim', 12)."""
    head, _, number = key.rpartition(SEPARATOR)
    return head.rpartition(".")[2], int(number)


def _metas(work: Path) -> dict[str, Path]:
    """mutmut's verdict file of each mutated source file, by the source's relative path."""
    root = work / "mutants"
    return {meta.relative_to(root).as_posix()[: -len(".meta")]: meta
            for meta in sorted(root.rglob("*.py.meta"))}


def seed(work: Path, ledger: dict[str, Any], in_scope: Callable[[str], bool]) -> int:
    """Mark the ledger's kills in mutmut's verdict files in `work` for every file of the run
    (`in_scope`) and every function whose hash in the work copy of the source is the
    ledger's; how many verdicts were set. Verdicts mutmut has already stay as they are."""
    from mutmut.mutation.file_mutation import compute_function_hashes

    if ledger["mutmut"] != mutmut_version():
        return 0
    seeded = 0
    for rel, functions in ledger["files"].items():
        source = work / rel
        if not in_scope(rel) or not source.is_file():
            continue
        current = compute_function_hashes(source.read_text(encoding="utf-8"))
        meta_path = work / "mutants" / f"{rel}.meta"
        if meta_path.exists():
            data = json.loads(meta_path.read_text(encoding="utf-8"))
        else:
            data = {"exit_code_by_key": {}, "hash_by_function_name": {},
                    "durations_by_key": {}, "estimated_durations_by_key": {}}
        hashes, codes = data["hash_by_function_name"], data["exit_code_by_key"]
        module = rel.removeprefix("src/").removesuffix(".py").replace("/", ".")
        module = module.removesuffix(".__init__")
        for name, entry in functions.items():
            if current.get(name) != entry["hash"] or hashes.setdefault(
                    name, entry["hash"]) != entry["hash"]:
                continue
            for number in entry["killed"]:
                key = f"{module}.{name}{SEPARATOR}{number}"
                if codes.get(key) is None:
                    codes[key] = 1
                    seeded += 1
        meta_path.parent.mkdir(parents=True, exist_ok=True)
        meta_path.write_text(json.dumps(data, indent=4), encoding="utf-8")
    return seeded


def record(work: Path, ledger: dict[str, Any]) -> dict[str, Any]:
    """The ledger with the kills in `work`: each file mutmut worked on is replaced by what its
    verdict files say (functions that changed or went away drop out); other files stay."""
    files = {} if ledger["mutmut"] != mutmut_version() else dict(ledger["files"])
    for rel, meta in _metas(work).items():
        data = json.loads(meta.read_text(encoding="utf-8"))
        hashes = data.get("hash_by_function_name", {})
        functions: dict[str, dict[str, Any]] = {}
        for key, code in data.get("exit_code_by_key", {}).items():
            name, number = _split(key)
            if code in KILLED and name in hashes:
                functions.setdefault(name, {"hash": hashes[name], "killed": []})
                functions[name]["killed"].append(number)
        for entry in functions.values():
            entry["killed"].sort()
        files[rel] = dict(sorted(functions.items()))
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
