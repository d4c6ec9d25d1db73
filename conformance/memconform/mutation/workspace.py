"""The directory mutmut works in: a copy of the installed `memref` and mutmut's settings.

It persists between runs (`--cache-dir`), so a rerun tries only the mutants of functions whose
code changed. A changed suite (checks, fixtures, harness) keeps the kills but retries every
mutant that was not killed, since new checks may kill it.
"""

from __future__ import annotations

import filecmp
import fnmatch
import hashlib
import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import memref
from memconform import resources

SUITE_STAMP = "suite.sha256"
CHECKS_COPY = "checks"
# scope -> modules left out of mutation (globs relative to the work directory), each with why
SCOPES: dict[str, dict[str, str]] = {"local": {
    "src/memref/cloud/*": "the cloud service, which the local profile does not reach",
    "src/memref/stdio.py": "the stdio transport: the mutation run drives the reference "
                           "in-process (a subprocess's calls cannot be traced to checks); "
                           "tests/test_adapters.py drives this loop over a pipe",
    "src/memref/cli.py": "the `memref startup` command line, which no adapter uses: the "
                         "mutation run drives the pipeline in-process through memref.adapter; "
                         "tests/test_bad_homes.py and the bench run this command",
    "src/memref/agent_reading.py": "the consolidation agent's read_file and list_files tools: "
                                   "the reference's own choice (the rules pin apply_patch and "
                                   "where the agent writes, AGENT-02; Codex's agent reads with "
                                   "shell commands), so no portable check can call them",
}}
LATEST_V1, LATEST_V2 = "0.171.0", "0.171.0/v2"
# mutmut's exit codes of a killed mutant (a check failed; pytest broke on the mutant)
KILLED = (1, 3)


class WorkspaceError(RuntimeError):
    """The cache directory cannot be used."""


@dataclass(frozen=True)
class Settings:
    areas: tuple[str, ...] = ()
    only: tuple[str, ...] = ()
    scope: str = "local"

    def toml(self) -> str:
        """mutmut's `[tool.mutmut]` table for this run."""
        selection = [CHECKS_COPY, *(arg for area in self.areas for arg in ("--area", area))]
        lines = [
            "[tool.mutmut]",
            'source_paths = ["src/memref"]',
            f"only_mutate = {json.dumps([f'src/memref/{g}' for g in self.only])}",
            f"do_not_mutate = {json.dumps(sorted(SCOPES[self.scope]))}",
            f"pytest_add_cli_args_test_selection = {json.dumps(selection)}",
            # importlib mode: pytest must not put the installed package's folder (where the
            # original memref lies) ahead of mutmut's copy on sys.path
            # one adapter per check: mutmut gives the work of starting the reference (its
            # operation table, the handshake) only to the checks that did it
            # the reference following 0.144.6 (layout v1), and again following the newest
            # release in layout v1 and in layout v2: the code only later releases run is
            # reached too (0.144.6 does not validate the agent's artifacts, and layout v2
            # validates others: the v1 validation needs the newest release in layout v1)
            'pytest_add_cli_args = ["-p", "no:cacheprovider", "--import-mode=importlib", '
            f'"--impl", "ref", "--also-impl", "ref@{LATEST_V1}", "--also-impl", '
            f'"ref@{LATEST_V2}", "--adapter-per-check", '
            '"--snapshot-warn-unused"]',
            f'also_copy = ["{CHECKS_COPY}"]',
            "use_git_change_detection = false",
            'on_dependency_change = "ignore"',
        ]
        return "\n".join(lines) + "\n"

    def mutates(self, rel: str) -> bool:
        """Whether mutmut mutates the file at `rel` (`src/memref/jobs.py`) in this run: the
        same glob matching as mutmut's `only_mutate` and `do_not_mutate`."""
        if not rel.endswith(".py"):
            return False
        if self.only and not any(fnmatch.fnmatch(rel, f"src/memref/{g}") for g in self.only):
            return False
        return not any(fnmatch.fnmatch(rel, g) for g in SCOPES[self.scope])


def source_dir() -> Path:
    return Path(memref.__file__).resolve().parent


def checks_dir() -> Path:
    return Path(__file__).resolve().parents[1] / "checks"


def _files(root: Path) -> dict[str, Path]:
    return {p.relative_to(root).as_posix(): p for p in root.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts}


def _mirror(source: Path, target: Path, keep: Callable[[str], bool]) -> list[str]:
    """Make `target` hold exactly the files of `source` that `keep` accepts."""
    target.mkdir(parents=True, exist_ok=True)
    wanted = {rel: path for rel, path in _files(source).items() if keep(rel)}
    present = _files(target)
    changed = []
    for rel, path in sorted(wanted.items()):
        dest = target / rel
        if rel in present and filecmp.cmp(path, dest, shallow=False):
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, dest)
        changed.append(rel)
    for rel in sorted(set(present) - set(wanted)):
        (target / rel).unlink()
        changed.append(rel)
    return changed


def sync(work: Path, settings: Settings) -> list[str]:
    """Bring `work/src/memref` in line with the installed package and `work/checks` with the
    installed check modules; the relative paths of the memref files that changed. A changed
    file gets a fresh modification time, which is how mutmut knows to mutate it again; an
    unchanged one is left alone.

    The check modules are copied because mutmut re-runs a mutant's checks by pytest node id,
    which must name a file under the directory it runs in (an installed package's ids do
    not); they import their helpers from the installed `memconform.checks`."""
    _mirror(checks_dir(), work / CHECKS_COPY,
            lambda rel: rel.startswith("__snapshots__/") or (
                "/" not in rel and rel.startswith("test_") and rel.endswith(".py")))
    target = work / "src" / "memref"
    changed = _mirror(source_dir(), target, lambda rel: True)
    for rel in changed:
        if not (target / rel).exists():  # gone from memref: its mutants go too
            for stale in (work / "mutants" / "src" / "memref").glob(f"{rel}*"):
                stale.unlink()
    config = work / "pyproject.toml"
    text = settings.toml()
    if not config.exists() or config.read_text(encoding="utf-8") != text:
        config.write_text(text, encoding="utf-8")
    return changed


def suite_digest() -> str:
    """A digest of everything that decides a verdict besides `memref`: the harness and its
    checks, the fixtures, SPEC and MANIFEST."""
    digest = hashlib.sha256()
    package = Path(__file__).resolve().parents[1]
    roots = [package, resources.fixtures_dir()]
    for root in roots:
        for rel, path in sorted(_files(root).items()):
            if path.suffix in (".pyc",):
                continue
            digest.update(rel.encode() + b"\0" + path.read_bytes() + b"\0")
    for name in ("SPEC.md", "MANIFEST.json"):
        digest.update(resources.doc(name).read_bytes())
    return digest.hexdigest()


def retry_unkilled(work: Path) -> int:
    """Forget every verdict but `killed`; how many were forgotten."""
    forgotten = 0
    for meta in (work / "mutants").rglob("*.py.meta"):
        data = json.loads(meta.read_text(encoding="utf-8"))
        codes = data.get("exit_code_by_key", {})
        for key, code in codes.items():
            if code is not None and code not in KILLED:
                codes[key] = None
                forgotten += 1
        meta.write_text(json.dumps(data, indent=4), encoding="utf-8")
    return forgotten


def forget_test_mapping(work: Path) -> None:
    """Make mutmut trace every check again. mutmut only traces checks it has not seen, so after
    a code change a new or changed function would be credited only to new checks, and its
    mutants run against too few checks (a refactor turned 40 killed mutants into survivors)."""
    stats = work / "mutants" / "mutmut-stats.json"
    if not stats.exists():
        return
    data = json.loads(stats.read_text(encoding="utf-8"))
    data["tests_by_mangled_function_name"] = {}
    data["duration_by_test"] = {}
    data["function_dependencies"] = {}
    stats.write_text(json.dumps(data, indent=4), encoding="utf-8")


def prepare(work: Path, settings: Settings, *, fresh: bool = False) -> tuple[list[str], int]:
    """Sync the work directory for a run: (files changed, verdicts forgotten because the code
    or the suite changed). Any change retraces every check and retries every verdict but
    `killed`: which checks reach a function, and so whether a mutant survives, depends on all
    of the code, not only on the function it mutates."""
    if settings.scope not in SCOPES:
        raise WorkspaceError(f"unknown mutation scope {settings.scope!r}")
    if work.exists() and not work.is_dir():
        raise WorkspaceError(f"{work} is not a directory")
    if fresh and work.exists():
        shutil.rmtree(work)
    try:
        work.mkdir(parents=True, exist_ok=True)
        changed = sync(work, settings)
    except OSError as exc:
        raise WorkspaceError(f"cannot prepare the mutation cache in {work}: {exc}") from exc
    stamp = work / SUITE_STAMP
    digest = suite_digest()
    forgotten = 0
    suite_changed = stamp.exists() and stamp.read_text(encoding="utf-8").strip() != digest
    if suite_changed or (changed and (work / "mutants").exists()):
        forget_test_mapping(work)
        forgotten = retry_unkilled(work)
    stamp.write_text(digest + "\n", encoding="utf-8")
    return changed, forgotten
