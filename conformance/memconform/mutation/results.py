"""Verdicts per mutant from mutmut's saved results, triage applied, and the report files."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import tomlkit

from memconform.mutation import sqlcase
from memconform.mutation.triage import Equivalent

# mutmut's exit codes -> our statuses
KILLED, SURVIVED, NO_TESTS, TIMEOUT = "killed", "survived", "no tests", "timeout"
EQUIVALENT, NOT_CHECKED, SUSPICIOUS = "equivalent", "not checked", "suspicious"
STATUS_BY_CODE: dict[int | None, str] = {
    1: KILLED, 3: KILLED, 0: SURVIVED, 5: NO_TESTS, 33: NO_TESTS, 36: TIMEOUT, 24: TIMEOUT,
    -24: TIMEOUT, 152: TIMEOUT, 255: TIMEOUT, -9: TIMEOUT, None: NOT_CHECKED}
STATUSES = (KILLED, TIMEOUT, EQUIVALENT, SURVIVED, NO_TESTS, SUSPICIOUS, NOT_CHECKED)
# statuses a triage entry may cover: the mutant ran and no check failed
UNDETECTED = (SURVIVED, NO_TESTS, SUSPICIOUS)

_DIFF_SCRIPT = """
import json, sys
from mutmut.mutation.diff_apply import get_diff_for_mutant
names = json.load(sys.stdin)
json.dump({n: get_diff_for_mutant(n) for n in names}, sys.stdout)
"""


@dataclass
class Mutant:
    id: str
    module: str
    status: str
    diff: str | None = None
    reason: str | None = None


@dataclass
class Verdict:
    mutants: list[Mutant]
    stale: list[str] = field(default_factory=list)

    def counts(self, module: str | None = None) -> dict[str, int]:
        tally = Counter(m.status for m in self.mutants if module in (None, m.module))
        return {s: tally.get(s, 0) for s in STATUSES}

    def modules(self) -> list[str]:
        return sorted({m.module for m in self.mutants})

    def score(self, module: str | None = None) -> float | None:
        """Detected (killed or timed out) over the mutants that ran and are not equivalent."""
        c = self.counts(module)
        judged = sum(c.values()) - c[EQUIVALENT] - c[NOT_CHECKED]
        return None if judged == 0 else (c[KILLED] + c[TIMEOUT]) / judged

    @property
    def untriaged(self) -> list[Mutant]:
        return [m for m in self.mutants if m.status in UNDETECTED]

    @property
    def complete(self) -> bool:
        return not any(m.status == NOT_CHECKED for m in self.mutants)


def module_of(key: str) -> str:
    """`memref.usage.x_record_usage__mutmut_3` -> `memref.usage`."""
    return key.rsplit(".", 1)[0]


def collect(work: Path) -> list[Mutant]:
    """Every mutant mutmut generated in the work directory, with its status."""
    found = []
    for meta in sorted((work / "mutants").rglob("*.py.meta")):
        data = json.loads(meta.read_text(encoding="utf-8"))
        for key, code in sorted(data.get("exit_code_by_key", {}).items()):
            found.append(Mutant(key, module_of(key), STATUS_BY_CODE.get(code, SUSPICIOUS)))
    return found


def source_reader(work: Path) -> Callable[[str], str | None]:
    """The original source of a mutated module in the work directory (`memref.jobs` ->
    `src/memref/jobs.py`), or None when there is none."""
    def read(module: str) -> str | None:
        path = work / "src" / Path(*module.split(".")).with_suffix(".py")
        try:
            return path.read_text(encoding="utf-8")
        except OSError:
            return None
    return read


def diffs(work: Path, names: list[str]) -> dict[str, str]:
    """mutmut's unified diff of each named mutant."""
    if not names:
        return {}
    done = subprocess.run([sys.executable, "-c", _DIFF_SCRIPT], cwd=work, input=json.dumps(names),
                          capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"reading mutant diffs failed: {done.stderr.strip()[-2000:]}")
    return dict(json.loads(done.stdout))


def judge(mutants: list[Mutant], equivalents: dict[str, Equivalent],
          diff_of: dict[str, str],
          source_of: Callable[[str], str | None] = lambda module: None) -> Verdict:
    """Apply the triage file: an undetected mutant it lists with the same diff is
    `equivalent`; an entry that lists a detected, missing or changed mutant is stale. An
    undetected mutant it does not list is `equivalent` when one of `sqlcase`'s classes proves
    it against its module's original source (`source_of`)."""
    by_id = {m.id: m for m in mutants}
    modules = {m.module for m in mutants}  # an entry of a module not mutated here is not judged
    stale = []
    for m in mutants:
        if m.status in UNDETECTED:
            m.diff = diff_of.get(m.id)
    for key, entry in sorted(equivalents.items()):
        mutant = by_id.get(key)
        if module_of(key) not in modules:
            continue
        if mutant is None:
            stale.append(f"{key}: no such mutant (the code changed; triage it again)")
        elif mutant.status == NOT_CHECKED:
            continue
        elif mutant.status not in UNDETECTED:
            stale.append(f"{key}: {mutant.status}, not a survivor (remove the entry)")
        elif (mutant.diff or "").strip("\n") != entry.diff:
            stale.append(f"{key}: its diff changed (the code changed; triage it again)")
        else:
            mutant.status, mutant.reason = EQUIVALENT, entry.reason
    for m in mutants:
        if m.status in UNDETECTED and m.diff:
            source = source_of(m.module)
            reason = None if source is None else sqlcase.reason_for(m.diff, source)
            if reason is not None:
                m.status, m.reason = EQUIVALENT, reason
    return Verdict(mutants, stale)


def _percent(score: float | None) -> str:
    return "—" if score is None else f"{100 * score:.1f} %"


def markdown(verdict: Verdict, facts: dict[str, Any]) -> str:
    head = ["module", *STATUSES, "score"]
    lines = [f"# Mutation testing of memref ({facts['date']})", "",
             f"mutmut {facts['mutmut']}, scope `{facts['scope']}`, areas "
             f"{', '.join(facts['areas']) or 'all'}, {facts['workers']} workers, "
             f"{facts['seconds']:.0f} s{' (budget spent)' if facts['budget_spent'] else ''}.",
             "", f"**Score: {_percent(verdict.score())}** of the non-equivalent mutants "
             "killed or timed out" + ("" if verdict.complete else
                                      " (incomplete: some mutants not checked yet)"), ""]
    if facts.get("ledger_kills"):
        lines += [f"{facts['ledger_kills']} of the kills come from the kill ledger (functions "
                  "unchanged since an earlier run killed those mutants).", ""]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    excluded = [f"- `{glob}`: {why}" for glob, why in sorted(facts.get("excluded", {}).items())]
    for module in [*verdict.modules(), None]:
        counts = verdict.counts(module)
        name = module or "**all**"
        lines.append(f"| {name} | " + " | ".join(str(counts[s]) for s in STATUSES)
                     + f" | {_percent(verdict.score(module))} |")
    by_sql = sum(m.reason == sqlcase.REASON for m in verdict.mutants)
    by_row = sum(m.reason == sqlcase.ROW_REASON for m in verdict.mutants)
    by_log = sum(m.reason == sqlcase.LOG_REASON for m in verdict.mutants)
    by_codec = sum(m.reason == sqlcase.CODEC_REASON for m in verdict.mutants)
    if by_sql or by_row or by_log or by_codec:
        lines += ["", f"Proved equivalent by class: {by_sql} sql-letter-case (only the letter "
                  "case of SQL words in an executed statement changes), "
                  f"{by_row} row-key-letter-case (only the letter case of a column name read "
                  f"from a fetched sqlite3.Row changes), {by_log} log-call (only the arguments "
                  f"of a logger call change), {by_codec} codec-name-letter-case (only the "
                  "letter case of a codec name Python looks up changes)."]
    if excluded:
        lines += ["", "## Not mutated", "", *excluded]
    if verdict.stale:
        lines += ["", "## Stale triage entries", ""] + [f"- {s}" for s in verdict.stale]
    if verdict.untriaged:
        lines += ["", "## Survivors to triage", "",
                  "Kill each with a check, or list it in the equivalent-mutant file with its "
                  "reason.", ""]
        for m in verdict.untriaged:
            lines += [f"### {m.id} ({m.status})", "", "```diff", m.diff or "", "```", ""]
    return "\n".join(lines).rstrip() + "\n"


def write(out: Path, verdict: Verdict, facts: dict[str, Any]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    payload = {**facts, "score": verdict.score(), "complete": verdict.complete,
               "counts": verdict.counts(),
               "by_module": {m: {**verdict.counts(m), "score": verdict.score(m)}
                             for m in verdict.modules()},
               "stale": verdict.stale,
               "mutants": [{k: v for k, v in asdict(m).items() if v is not None}
                           for m in verdict.mutants]}
    (out / "mutation.json").write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    (out / "MUTATION.md").write_text(markdown(verdict, facts), encoding="utf-8")
    (out / "untriaged.toml").write_text(template(verdict), encoding="utf-8")


def template(verdict: Verdict) -> str:
    """The untriaged survivors as equivalent-file entries, each reason still to write."""
    document = tomlkit.document()
    document.add(tomlkit.comment("Survivors to triage: kill each with a check, or move its "
                                 "entry to the equivalent-mutant file with a real reason."))
    entries = tomlkit.aot()
    for m in verdict.untriaged:
        item = tomlkit.table()
        item["id"] = m.id
        item["reason"] = f"TODO ({m.status})"
        item["diff"] = tomlkit.string((m.diff or "") + "\n", multiline=True)
        entries.append(item)
    document["mutant"] = entries
    return tomlkit.dumps(document)
