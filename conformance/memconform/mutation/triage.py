"""The equivalent-mutant file: survivors no check can kill, each with its diff and reason.

    [[mutant]]
    id = "memref.usage.x_record_usage__mutmut_3"
    reason = "why no implementation could be told apart from the reference by this change"
    diff = '''the unified diff mutmut shows for it'''

The diff is compared with the mutant's diff of the day: when the code changes, mutmut's
numbering can point the id at another mutation, and the entry no longer says anything.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from memconform import resources

FILE = Path("mutation") / "equivalent.toml"
KEYS = {"id", "reason", "diff"}


class TriageError(ValueError):
    """An equivalent-mutant file that cannot be used."""


@dataclass(frozen=True)
class Equivalent:
    id: str
    reason: str
    diff: str


def default_file() -> Path:
    return resources.doc(FILE.as_posix())


def load(path: Path) -> dict[str, Equivalent]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise TriageError(f"{path}: no such file") from exc
    except UnicodeDecodeError as exc:
        raise TriageError(f"{path}: not UTF-8 text") from exc
    except tomllib.TOMLDecodeError as exc:
        raise TriageError(f"{path}: not TOML: {exc}") from exc
    extra = set(data) - {"mutant"}
    if extra:
        raise TriageError(f"{path}: unknown top-level keys {sorted(extra)} (only [[mutant]])")
    entries = data.get("mutant", [])
    if not isinstance(entries, list):
        raise TriageError(f"{path}: `mutant` must be an array of tables ([[mutant]])")
    found: dict[str, Equivalent] = {}
    for number, entry in enumerate(entries, 1):
        where = f"{path}: [[mutant]] #{number}"
        if not isinstance(entry, dict) or set(entry) != KEYS:
            keys = sorted(entry) if isinstance(entry, dict) else type(entry).__name__
            raise TriageError(f"{where} must have exactly the keys id, reason, diff "
                              f"(has {keys})")
        if not all(isinstance(entry[k], str) and entry[k].strip() for k in KEYS):
            raise TriageError(f"{where}: id, reason and diff must be non-empty strings")
        if entry["id"] in found:
            raise TriageError(f"{where}: {entry['id']} is listed twice")
        found[entry["id"]] = Equivalent(entry["id"], entry["reason"].strip(),
                                        entry["diff"].strip("\n"))
    return found
