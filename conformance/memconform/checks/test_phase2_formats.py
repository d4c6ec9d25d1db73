"""DIFF-03, GIT-02: the exact bytes of the workspace diff's file sections and of the baseline
commit message, as the binary writes them."""

from __future__ import annotations

import re

from memconform.checks.consolidation import (
    DIFF_FILE,
    agent_patches,
    configure,
    expire_cooldown,
    git,
    global_job,
    seed_memory,
)
from memconform.fixtures import StartupRunner
from memconform.home import CodexHome
from memconform.mockmodel import MockModel
from memconform.registry import check
from memconform.verdicts import fail

MESSAGE = "Initialize Codex git baseline\n\nCo-authored-by: Codex <noreply@openai.com>"
BEFORE = "".join(f"    line {n}\n" for n in range(1, 11))
MEMORY_BEFORE = "# Memory\n\ndef remembered():\n" + BEFORE
MEMORY_AFTER = MEMORY_BEFORE.replace("    line 10\n", "    LINE 10\n")
NOTES = "first\nsecond\n"
# the sections of the two files this check controls, as git's unified diff writes them
# without `index` lines and with nothing after a hunk header's closing `@@`
EXPECTED_SECTIONS = {
    "MEMORY.md": ("diff --git a/MEMORY.md b/MEMORY.md\n--- a/MEMORY.md\n+++ b/MEMORY.md\n"
                  "@@ -10,4 +10,4 @@\n     line 7\n     line 8\n     line 9\n-    line 10\n"
                  "+    LINE 10\n"),
    "notes.md": ("diff --git a/notes.md b/notes.md\ndeleted file mode 100644\n--- a/notes.md\n"
                 "+++ /dev/null\n@@ -1,2 +0,0 @@\n-first\n-second\n"),
}
HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@")


def _message(commit_object: str) -> str:
    """The message of a `git cat-file commit` object, byte for byte."""
    return commit_object.split("\n\n", 1)[1]


def _sections(diff_text: str) -> dict[str, str]:
    body = diff_text.split("```diff\n", 1)[-1].rsplit("```", 1)[0]
    parts = re.split(r"(?m)^(?=diff --git )", body)
    return {m.group(1): part for part in parts
            if (m := re.match(r"diff --git a/(\S+) b/", part))}


@check("p2.diff.plain-headers", title="the workspace diff has no index lines and nothing after "
       "a hunk header", rules="DIFF-03", level="SHOULD", area="phase2")
def test_plain_headers(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    configure(home)
    root = home.memory_root
    root.mkdir(parents=True, exist_ok=True)
    (root / "MEMORY.md").write_text(MEMORY_BEFORE, encoding="utf-8")
    (root / "notes.md").write_text(NOTES, encoding="utf-8")
    seed_memory(home)
    agent_patches(model, "*** Begin Patch\n*** Add File: first.md\n+x\n*** End Patch\n")
    run_startup(home)
    job = global_job(home)
    assert job is not None and job["status"] == "done", \
        "the first consolidation did not finish, so there is no baseline to diff against"
    (root / "MEMORY.md").write_text(MEMORY_AFTER, encoding="utf-8")
    (root / "notes.md").unlink()
    seed_memory(home, age_s=3 * 3600)
    seen: dict[str, str] = {}

    def read_diff() -> None:
        path = root / DIFF_FILE
        seen["diff"] = path.read_text(encoding="utf-8") if path.is_file() else ""

    model.reset()
    agent_patches(model, "*** Begin Patch\n*** Add File: second.md\n+x\n*** End Patch\n",
                  then=read_diff)
    expire_cooldown(home)
    run_startup(home)
    text = seen.get("diff")
    if not text:
        fail(f"{DIFF_FILE} was not there while the second consolidation ran")
    index_lines = [line for line in text.splitlines() if line.startswith("index ")]
    assert index_lines == [], "the workspace diff carries git's index lines"
    headers = [line for line in text.splitlines() if line.startswith("@@ ")]
    assert headers, "the workspace diff has no hunk header"
    assert [h for h in headers if HUNK.sub("", h)] == [], \
        "a hunk header carries text after its closing @@"
    sections = _sections(text)
    for name, expected in EXPECTED_SECTIONS.items():
        assert sections.get(name, "") == expected, \
            f"the workspace diff's section for {name} is not git's plain unified diff"


@check("p2.git.message-bytes", title="the baseline commit message ends with the co-author "
       "trailer and no newline, after the first run and after a reset", rules="GIT-02",
       level="SHOULD", area="phase2")
def test_message_bytes(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    configure(home)
    seed_memory(home)
    root = home.memory_root
    seen: dict[str, str] = {}

    def first_baseline() -> None:
        seen["first"] = git(root, "cat-file", "commit", "HEAD")

    agent_patches(model, "*** Begin Patch\n*** Add File: MEMORY.md\n+# Memory\n*** End Patch\n",
                  then=first_baseline)
    run_startup(home)
    if "first" not in seen:
        fail("the consolidation agent never ran, so the first baseline was not read")
    assert _message(seen["first"]) == MESSAGE, \
        "the first baseline's commit message is not exactly the subject, a blank line and the " \
        "trailer"
    job = global_job(home)
    assert job is not None and job["status"] == "done", "the consolidation did not finish"
    assert _message(git(root, "cat-file", "commit", "HEAD")) == MESSAGE, \
        "the baseline committed after the run has a different commit message"
