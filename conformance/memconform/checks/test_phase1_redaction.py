"""RED: secrets are redacted before the request is sent and in every stored field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memconform.checks.consolidation import GLOBAL, agent_finishes
from memconform.checks.stage1 import configure, extracted_once, output, user_text
from memconform.fixtures import StartupRunner
from memconform.home import CodexHome
from memconform.mockmodel import MockModel, Recorded, json_output
from memconform.registry import check
from memconform.resources import fixture_json

CASES = fixture_json("phase1", "redaction.json")
REDACTED = CASES["marker"]


def _ids(group: str) -> pytest.MarkDecorator:
    return pytest.mark.parametrize("case", CASES[group], ids=[c["id"] for c in CASES[group]])


def pipeline_bytes(home: CodexHome) -> bytes:
    """Everything the pipeline itself wrote: the memories DB (with WAL) and the memory root's
    files (`.git` holds compressed copies of the same files, so it is not scanned)."""
    paths = [p for p in home.path.glob(home.memories_db.name + "*") if p.is_file()]
    if home.memory_root.exists():
        paths += [p for p in home.memory_root.rglob("*")
                  if p.is_file() and ".git" not in p.relative_to(home.memory_root).parts]
    assert (home.memory_root / "raw_memories.md").is_file(), \
        "Phase 2 did not write raw_memories.md, so the scan would prove nothing"
    return b"".join(p.read_bytes() for p in sorted(paths))


def run_with_secret(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                    text: str, answer: dict[str, Any], *, consolidate: bool = False
                    ) -> tuple[Recorded, dict[str, Any] | None]:
    """Plant `text` in the rollout, answer with `answer`; the request and the stored row.
    With `consolidate`, Phase 2 runs too, so the memory root's files are written."""
    configure(home)
    if consolidate:
        home.execute(home.memories_db, "DELETE FROM jobs WHERE kind = ?", (GLOBAL,))
        agent_finishes(model)
    thread = home.add_thread(user_text=f"Remember this for later: {text}",
                             assistant_text=f"I will keep {text} in mind.")
    model.on("stage1", json_output(answer))
    run_startup(home)
    return extracted_once(model, thread.id), output(home, thread.id)


def answer_with(text: str) -> dict[str, Any]:
    return {"raw_memory": f"memory: {text}", "rollout_summary": f"summary: {text}",
            "rollout_slug": f"slug {text}"}


def assert_stored_without(row: dict[str, Any] | None, needle: str) -> None:
    assert row is not None, "the answer was not stored: no stage1_outputs row"
    for field in ("raw_memory", "rollout_summary", "rollout_slug"):
        assert needle not in (row[field] or ""), f"the stored {field} keeps the secret"
        assert REDACTED in (row[field] or ""), \
            f"the stored {field} does not carry the redaction marker"


def assert_request_redacted(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                            case: dict[str, Any]) -> None:
    sent, _ = run_with_secret(home, model, run_startup, case["text"], answer_with("none"))
    assert case["needle"] not in sent.text, "the secret reached the extraction request"
    assert REDACTED in user_text(sent), \
        "the secret was not replaced by the redaction marker in the conversation"


def assert_no_leak(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                   cases: list[dict[str, Any]]) -> None:
    """Plant every case in the rollout and in the answer; scan every byte written after."""
    planted = " | ".join(c["text"] for c in cases)
    run_with_secret(home, model, run_startup, planted, answer_with(planted), consolidate=True)
    data = pipeline_bytes(home)
    leaked = [c["id"] for c in cases if c["needle"].encode() in data]
    assert leaked == [], "secrets survive in the files the pipeline wrote (the cases found)"


@check("p1.red.request.codex", title="secret shapes Codex redacts never reach the extraction "
       "request", rules="RED-01", level="MUST", area="phase1")
@_ids("codex")
def test_request_codex(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                       case: dict[str, Any]) -> None:
    assert_request_redacted(home, model, run_startup, case)


@check("p1.red.request.extended", title="secret shapes Codex misses never reach the "
       "extraction request", rules="RED-02", level="SHOULD", area="phase1")
@_ids("extended")
def test_request_extended(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                          case: dict[str, Any]) -> None:
    assert_request_redacted(home, model, run_startup, case)


@check("p1.red.stored.codex", title="the model's memory, summary and slug are stored with "
       "Codex-shape secrets replaced exactly", rules="RED-01", level="MUST", area="phase1",
       layout="v1")
@_ids("codex")
def test_stored_codex(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                      case: dict[str, Any]) -> None:
    _, row = run_with_secret(home, model, run_startup, "nothing secret",
                             answer_with(case["text"]))
    assert row is not None, "the answer was not stored: no stage1_outputs row"
    assert row["raw_memory"] == f"memory: {case['redacted']}", \
        "the stored raw_memory is not the answer with its secret redacted exactly"
    assert row["rollout_summary"] == f"summary: {case['redacted']}", \
        "the stored rollout_summary is not the answer with its secret redacted exactly"
    assert row["rollout_slug"] == f"slug {case['redacted']}", \
        "the stored rollout_slug is not the answer with its secret redacted exactly"


@check("p1.red.stored.extended", title="the model's memory, summary and slug are stored "
       "without secret shapes Codex misses", rules="RED-02", level="SHOULD", area="phase1",
       layout="v1")
@_ids("extended")
def test_stored_extended(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                         case: dict[str, Any]) -> None:
    _, row = run_with_secret(home, model, run_startup, "nothing secret",
                             answer_with(case["text"]))
    assert_stored_without(row, case["needle"])


@check("p1.red.leak-scan.codex", title="no Codex-shape secret survives in any byte the "
       "pipeline writes", rules="RED-03", level="MUST", area="phase1", layout="v1")
def test_leak_scan_codex(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    assert_no_leak(home, model, run_startup, CASES["codex"])


@check("p1.red.leak-scan.extended", title="no secret shape Codex misses survives in any byte "
       "the pipeline writes", rules="RED-03", level="SHOULD", area="phase1", layout="v1")
def test_leak_scan_extended(home: CodexHome, model: MockModel,
                            run_startup: StartupRunner) -> None:
    assert_no_leak(home, model, run_startup, CASES["extended"])


# Every generated value starts with a tag no file holds by chance, so a leak cannot be
# mistaken for unrelated bytes (a run of zeros, say) and a find is always the secret.
ALNUM = st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
                min_size=20, max_size=36).map(lambda s: "mcQ7" + s)
GENERATED = st.one_of(
    ALNUM.map(lambda s: (f"sk-{s}", s)),
    st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", min_size=12, max_size=12)
    .map(lambda s: (f"AKIAMCQ7{s}", f"MCQ7{s}")),
    st.tuples(st.sampled_from(["password", "token", "api_key", "secret", "API-KEY"]),
              st.sampled_from(["=", ": ", " = "]), ALNUM)
    .map(lambda t: (f"{t[0]}{t[1]}{t[2]}", t[2])),
    ALNUM.map(lambda s: (f"Bearer {s}", s)),
)


@check("p1.red.generated", title="generated Codex-shape secrets are redacted in the request "
       "and in storage", rules=("RED-01", "RED-03"), level="MUST", area="phase1", layout="v1")
@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(secret=GENERATED)
def test_generated(tmp_path_factory: pytest.TempPathFactory, home: CodexHome, model: MockModel,
                   run_startup: StartupRunner, secret: tuple[str, str]) -> None:
    planted, needle = secret
    fresh = CodexHome(Path(tmp_path_factory.mktemp("gen")) / "home", now_ms=home.now_ms,
                      model_base_url=home.model_base_url, layout=home.layout)
    model.reset()
    sent, row = run_with_secret(fresh, model, run_startup, planted, answer_with(planted),
                                consolidate=True)
    assert needle not in sent.text, "the generated secret reached the extraction request"
    assert_stored_without(row, needle)
    on_disk = needle.encode() in pipeline_bytes(fresh)
    assert not on_disk, "the generated secret survives in a file the pipeline wrote"
