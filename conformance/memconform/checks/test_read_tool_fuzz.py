"""TOOL-PATH-05: generated paths and note names thrown at every memory tool, against a memory
root planted with symlinks (to the outside, to the root, dangling, in loops) and hidden files.

An independent oracle walks the same tree with `lstat`: a path with a parent, absolute or drive
prefix, a hidden component, a symlink at any depth or a walk through a file must be refused;
a clean existing path must be served with exactly what the oracle sees. Nothing outside the
root, and nothing hidden, may ever appear in an answer or be written.
"""

from __future__ import annotations

import json
import os
import random
import re
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memconform.adapters import Adapter
from memconform.home import CodexHome
from memconform.protocol import ProtocolViolation, validate_tool_output
from memconform.registry import check
from memconform.trees import Tree
from memconform.verdicts import fail, produced

INPUTS = 10_000  # generated inputs per tool
# calls per `tools.call`: the real binary answers each in one session, and a session's requests
# carry every earlier call, so the write tool (whose calls split into many model answers) and
# search (large outputs) stay at 250 while the two read-only listings go 1,000 at a time
BATCH = {"list": 1_000, "read": 1_000}
BATCH_DEFAULT = 250
TOKENS = ("OUTSIDE-TOKEN", "HIDDEN-TOKEN")
NOTES = "extensions/ad_hoc/notes"
PLANTED = ("2026-01-01T00-00-00-planted-dangling.md", "2026-01-01T00-00-00-planted-secret.md")
TREE: dict[str, Any] = {
    "files": {"MEMORY.md": "needle memory\n", "memory_summary.md": "v1\nneedle\n",
              "skills/a/SKILL.md": "needle skill\n", "rollout_summaries/r.md": "a\nneedle\n",
              "deep/er/est/file.md": "needle deep\n", ".hidden.md": "HIDDEN-TOKEN needle\n",
              ".git/config": "HIDDEN-TOKEN needle\n", "skills/.secret/x.md": "HIDDEN-TOKEN\n"},
    "outside": {"secret.txt": "OUTSIDE-TOKEN needle\n", "sub/inner.md": "OUTSIDE-TOKEN needle\n"},
    "dirs": [NOTES],
    "symlinks": {"out": "../outside", "absout": "{outside}",
                 "secretlink.md": "../outside/secret.txt", "skills/a/up": "../../../outside",
                 "deep/er/loop": ".", "deep/er/est/parent": "../..", "rootlink": "{root}",
                 "dangling": "missing",
                 f"{NOTES}/{PLANTED[0]}": "{outside}/planted.md",
                 f"{NOTES}/{PLANTED[1]}": "../../../../outside/secret.txt"},
}
WORDS = ("", ".", "..", "...", "out", "absout", "secretlink.md", "skills", "a", "up", "SKILL.md",
         "deep", "er", "est", "file.md", "loop", "parent", "rootlink", "dangling", ".git",
         "config", ".hidden.md", "MEMORY.md", "memory_summary.md", "rollout_summaries", "r.md",
         "secret.txt", "sub", "inner.md", "outside", "memories", ".secret", "x.md", "C:", "c:",
         "~", "%2e%2e", "..\\out", "\\", "*", "extensions", "ad_hoc", "notes", *PLANTED,
         "ab", "a.b", "-", "é", " ", "a\x00b", "x" * 300)
PREFIXES = ("", "", "", "/", "./", "../", "{root}/", "{outside}/", "C:\\", "//")
NOTE_NAME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}-[0-9]{2}-[0-9]{2}-[a-z0-9-]{1,80}\.md")


# Paths that exist in the tree, many of them through a planted link: the walks a model would try.
WALKS = ("MEMORY.md", "memory_summary.md", "skills", "skills/a", "skills/a/SKILL.md",
         "rollout_summaries/r.md", "deep/er/est/file.md", "out", "out/secret.txt",
         "out/sub/inner.md", "absout/secret.txt", "absout/sub", "secretlink.md",
         "skills/a/up/secret.txt", "skills/a/up/sub/inner.md", "deep/er/loop/est/file.md",
         "deep/er/loop/loop/est", "deep/er/est/parent/er/est/file.md", "rootlink/MEMORY.md",
         "rootlink/out/secret.txt", "dangling", "dangling/x", ".hidden.md", ".git/config",
         "skills/.secret/x.md", f"{NOTES}/{PLANTED[1]}", "extensions/ad_hoc",
         "../outside/secret.txt", "memories/../outside/secret.txt", "MEMORY.md/x")


def mutated(walk: str, edits: list[tuple[int, int]]) -> str:
    """Apply small edits to a walk: dots, doubled or trailing slashes, parents, hidden names."""
    parts = walk.split("/")
    for kind, at in edits:
        at %= len(parts) + 1
        if kind == 0:
            parts.insert(at, ".")
        elif kind == 1:
            parts.insert(at, "..")
        elif kind == 2:
            parts.insert(at, "")
        elif kind == 3 and at < len(parts):
            parts[at] = "." + parts[at]
        elif kind == 4:
            parts.insert(at, WORDS[at % len(WORDS)])
    return "/".join(parts)


def path_input(rng: random.Random) -> str:
    """One generated path: two in three are walks of the tree with small edits, the rest
    random joins of words with odd prefixes and separators."""
    if rng.randrange(3) < 2:
        edits = [(rng.randint(0, 4), rng.randint(0, 7)) for _ in range(rng.randint(0, 2))]
        return (rng.choice(("", "", "", "./", "/", "{root}/"))
                + mutated(rng.choice(WALKS), edits) + rng.choice(("", "", "/")))
    parts = [rng.choice(WORDS) for _ in range(rng.randint(1, 6))]
    return (rng.choice(PREFIXES) + rng.choice(("/", "/", "//", "\\")).join(parts)
            + rng.choice(("", "", "/")))


# Code points for free text: ASCII, controls, Latin-1, other BMP letters, an astral symbol.
_TEXT_RANGES = ((0x20, 0x7E), (0x00, 0x1F), (0xA0, 0xFF), (0x400, 0x4FF), (0x4E00, 0x4E2F),
                (0x1F600, 0x1F60F))


def _text(rng: random.Random, alphabet: str | None, low: int, high: int) -> str:
    size = rng.randint(low, high)
    if alphabet is not None:
        return "".join(rng.choice(alphabet) for _ in range(size))
    ranges = [rng.choice(_TEXT_RANGES) for _ in range(size)]
    return "".join(chr(rng.randint(a, b)) for a, b in ranges)


def name_input(rng: random.Random) -> str:
    """One generated note name: well-formed, a stamp/slug/suffix mix, a planted name, or free
    text."""
    form = rng.randrange(4)
    if form == 0:
        return (f"2026-05-26T13-42-{rng.randint(0, 99):02d}-"
                f"{_text(rng, 'abcdefghijklmnopqrstuvwxyz0123456789-', 1, 84)}.md")
    if form == 1:
        stamp = rng.choice(("2026-05-26T13-42-08-", "2026-99-99T99-99-99-", "2026-5-26T1-2-3-",
                            "2026-05-26T13:42:08-", "\uff12\uff10\uff12\uff16-05-26T13-42-08-",
                            "", "../"))
        return (stamp + _text(rng, "abz09-_./\\ AZé", 0, 90)
                + rng.choice((".md", ".md", ".txt", "", ".md/", ".MD")))
    if form == 2:
        return rng.choice(PLANTED)
    return _text(rng, None, 0, 20)


class Oracle:
    """What the tools must do, decided by walking the tree with `lstat` (never following)."""

    def __init__(self, tree: Tree) -> None:
        self.root = tree.root

    def judged(self, path: str) -> tuple[str, Path | None, str]:
        """("refuse", None, why) for a path that must be refused, else its kind, location and
        what it names."""
        if path.startswith("/") or re.match(r"[A-Za-z]:", path):
            return "refuse", None, "it is absolute or has a drive prefix"
        parts = [p for p in path.split("/") if p not in ("", ".")]
        if ".." in parts:
            return "refuse", None, "it has a parent component"
        if any(p.startswith(".") for p in parts):
            return "refuse", None, "it has a hidden component"
        if "\x00" in path:
            return "refuse", None, "it holds a NUL character"
        current = self.root
        for index, part in enumerate(parts):
            current = current / part
            try:
                mode = os.lstat(current).st_mode
            except FileNotFoundError:
                return "refuse", None, "it names nothing in the memory root"
            except OSError:  # a name too long for the file system
                return "refuse", None, "it names nothing the file system can hold"
            if stat.S_ISLNK(mode):
                return "refuse", None, "it goes through a symlink"
            if index + 1 < len(parts) and not stat.S_ISDIR(mode):
                return "refuse", None, "it walks through a file"
        mode = os.lstat(current).st_mode
        kind = "dir" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else "other"
        names = {"dir": "a directory", "file": "a file"}.get(kind, "neither file nor directory")
        return kind, current, f"it names {names}"

    def visible(self, folder: Path) -> list[Path]:
        return [folder / n for n in os.listdir(folder) if not n.startswith(".")
                and not stat.S_ISLNK(os.lstat(folder / n).st_mode)]

    def files_below(self, target: Path) -> list[Path]:
        if target.is_file():
            return [target]
        found = []
        for child in self.visible(target):
            found += self.files_below(child) if child.is_dir() else [child]
        return found

    def rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()


def assert_no_leak(result: dict[str, Any], where: str) -> None:
    text = json.dumps(result)
    for token in TOKENS:
        assert token not in text, f"{where}: the answer shows {token}, " + (
            "a file outside the memory root" if token == "OUTSIDE-TOKEN" else "a hidden file")


def tool_output(tool: str, result: dict[str, Any], where: str) -> dict[str, Any]:
    """The `output` of a served call, valid for its tool (tools.json)."""
    output: dict[str, Any] = result["output"]
    try:
        validate_tool_output(tool, output)
    except ProtocolViolation as exc:
        fail(f"{where} answered an output the {tool} tool's schema does not allow ({exc})")
    return output


def served(oracle: Oracle, tool: str, path: str, result: dict[str, Any],
           kinds: tuple[str, ...]) -> tuple[Path, dict[str, Any]] | None:
    """The oracle's verdict enforced: refused unless the path is clean and names an entry of
    a kind the tool serves; the entry and the tool's output when it was served."""
    kind, target, reason = oracle.judged(path)
    if kind not in kinds or target is None:
        assert "error" in result, f"{tool} of {path!r} was served, but must be refused: {reason}"
        return None
    if "output" not in result:
        fail(f"{tool} of the clean path {path!r} was refused ({reason}): {result['error']}")
    return target, tool_output(tool, result, f"{tool} of {path!r}")


def expect_list(oracle: Oracle, path: str, result: dict[str, Any]) -> None:
    answer = served(oracle, "list", path, result, ("dir", "file"))
    if answer is not None:
        target, output = answer
        shown = oracle.visible(target) if target.is_dir() else [target]
        entries = sorted((oracle.rel(p), "directory" if p.is_dir() else "file") for p in shown)
        got = sorted((e["path"], e["entry_type"]) for e in output["entries"])
        assert got == entries, \
            f"list of {path!r} does not show exactly the visible entries there (path, type)"


def expect_read(oracle: Oracle, path: str, result: dict[str, Any]) -> None:
    answer = served(oracle, "read", path, result, ("file",))
    if answer is not None:
        target, output = answer
        assert output["content"] == target.read_text(encoding="utf-8"), \
            f"read of {path!r} does not return the file's content"


def expect_search(oracle: Oracle, path: str, result: dict[str, Any]) -> None:
    answer = served(oracle, "search", path, result, ("dir", "file"))
    if answer is not None:
        target, output = answer
        want = sorted((oracle.rel(f), n) for f in oracle.files_below(target)
                      for n, line in enumerate(f.read_text(encoding="utf-8").split("\n"), 1)
                      if "needle" in line)
        got = sorted((m["path"], m["match_line_number"]) for m in output["matches"])
        assert got == want, f"search of {path!r} for needle does not find exactly the " \
            "matching lines of the visible files there (path, line number)"


JUDGES = {"list": expect_list, "read": expect_read, "search": expect_search}


def run_fuzz(impl: Adapter, home: CodexHome, facts: dict[str, Any], seed: str,
             generate: Callable[[random.Random], str], make_call: Callable[[str], dict[str, Any]],
             judge: Callable[[str, dict[str, Any]], None], batch: int = BATCH_DEFAULT) -> Tree:
    """INPUTS inputs from a generator seeded by `seed` (the same inputs every run, whatever the
    batch), sent `batch` calls per `tools.call`; stops at the first batch with a wrong
    answer."""
    home.write_config(memories={"dedicated_tools": True})
    tree = Tree(home.memory_root)
    tree.build(TREE)
    outside = tree.outside_files()
    rng = random.Random(seed)
    facts["inputs"] = 0
    while facts["inputs"] < INPUTS:
        subs = [tree.substitute(generate(rng))
                for _ in range(min(batch, INPUTS - facts["inputs"]))]
        calls = [make_call(v) for v in subs]
        results = impl.call("tools.call", {"home": str(home.path), "calls": calls})["results"]
        assert len(results) == len(calls), \
            f"tools.call with {len(calls)} calls did not answer one result per call"
        for value, call, result in zip(subs, calls, results, strict=True):
            assert_no_leak(result, f"{call['name']} of {value!r}")
            judge(value, result)
        assert tree.outside_files() == outside, \
            "a file in the folder outside the memory root was changed by the calls"
        facts["inputs"] += len(subs)
    return tree


def fuzz_check(tool: str) -> Any:
    @check(f"read.tool.fuzz.{tool}", title=f"{tool}: 10,000 generated paths against planted "
           "symlinks and hidden files; no answer escapes the memory root or shows a hidden "
           "file, and every clean path is served", rules=("TOOL-PATH-05",), level="SHOULD",
           area="read", needs=("memory.tools",))
    @pytest.mark.timeout(300)
    def test(impl: Adapter, home: CodexHome, facts: dict[str, Any]) -> None:
        oracle = Oracle(Tree(home.memory_root))

        def make(path: str) -> dict[str, Any]:
            args = {"queries": ["needle"], "path": path} if tool == "search" else {"path": path}
            return {"name": tool, "arguments": json.dumps(args)}

        run_fuzz(impl, home, facts, f"read.tool.fuzz.{tool}", path_input, make,
                 lambda path, result: JUDGES[tool](oracle, path, result),
                 BATCH.get(tool, BATCH_DEFAULT))

    return test


test_fuzz_list = fuzz_check("list")
test_fuzz_read = fuzz_check("read")
test_fuzz_search = fuzz_check("search")


@check("read.tool.fuzz.add_ad_hoc_note", title="add_ad_hoc_note: 10,000 generated names; only "
       "well-formed new names create a file, only in the notes folder, never through a "
       "planted symlink", rules=("TOOL-PATH-05", "TOOL-NOTE-02", "TOOL-NOTE-03"),
       level="SHOULD", area="read", needs=("memory.tools",))
@pytest.mark.timeout(300)
def test_fuzz_note(impl: Adapter, home: CodexHome, facts: dict[str, Any]) -> None:
    notes = Tree(home.memory_root).root / NOTES
    created: set[str] = set()

    def make(name: str) -> dict[str, Any]:
        return {"name": "add_ad_hoc_note",
                "arguments": json.dumps({"filename": name, "note": f"note {name}"})}

    def judge(name: str, result: dict[str, Any]) -> None:
        """Judged in call order, so `created` is the folder as the call found it."""
        why = ("a planted symlink in the notes folder" if name in PLANTED
               else "the name of a note written before" if name in created
               else "not of the form YYYY-MM-DDTHH-MM-SS-slug.md (a slug of a-z, 0-9 and -)"
               if NOTE_NAME.fullmatch(name) is None
               else "longer than 128 bytes" if len(name.encode()) > 128 else None)
        if why is not None:
            assert "error" in result, \
                f"add_ad_hoc_note accepted the name {name!r}, which is {why}"
            return
        if "output" not in result:
            fail(f"add_ad_hoc_note refused the well-formed new name {name!r}: {result['error']}")
        tool_output("add_ad_hoc_note", result, f"add_ad_hoc_note of {name!r}")
        created.add(name)
        assert produced(notes / name, f"the accepted note {name}") == f"note {name}", \
            f"the accepted note {name} does not hold exactly the note text"

    tree = run_fuzz(impl, home, facts, "read.tool.fuzz.add_ad_hoc_note", name_input, make,
                    judge)
    written = {k for k in tree.files(tree.root, tree.root) if k.startswith(NOTES + "/")}
    assert written == {f"{NOTES}/{n}" for n in created}, \
        f"the files in {NOTES} are not exactly the accepted notes"
    others = {k: v for k, v in tree.files(tree.root, tree.root).items()
              if not k.startswith(NOTES + "/")}
    assert others == TREE["files"], \
        f"a file in the memory root outside {NOTES} was written or changed"
    facts["notes_created"] = len(created)
