"""Run the benchmarks as whole processes, several times each, and write BENCHMARKS.md-style
Markdown and JSON with the machine they ran on."""

from __future__ import annotations

import json
import os
import platform
import shutil
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from memconform.bench.data import home_with_threads

PROBE = [sys.executable, "-m", "memconform.bench.probes"]
RACE_TIMEOUT_S = 900


@dataclass
class Result:
    name: str
    unit: str
    samples: list[float]
    extra: dict[str, Any] = field(default_factory=dict)
    target: float | None = None  # the median must stay at or under it
    goal: tuple[str, bool] | None = None  # a target on something else: its text, and whether met

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def spread(self) -> tuple[float, float]:
        return min(self.samples), max(self.samples)

    @property
    def met(self) -> bool | None:
        if self.goal is not None:
            return self.goal[1]
        return None if self.target is None else self.median <= self.target

    @property
    def target_text(self) -> str:
        if self.goal is not None:
            return self.goal[0]
        return "" if self.target is None else f"≤ {self.target:g} {self.unit}"

    def row(self) -> dict[str, Any]:
        return {"name": self.name, "unit": self.unit, "median": self.median,
                "min": self.spread[0], "max": self.spread[1], "runs": len(self.samples),
                "target": self.target_text or None, "met": self.met, **self.extra}


def probe_command(name: str, **args: Any) -> list[str]:
    return [*PROBE, name, json.dumps(args)]


def probe(name: str, **args: Any) -> dict[str, Any]:
    done = subprocess.run(probe_command(name, **args), capture_output=True, text=True,
                          timeout=900, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"probe {name} {args} failed: {done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def repeat(runs: int, measure: Callable[[], dict[str, Any]]) -> tuple[list[float],
                                                                      dict[str, Any]]:
    samples, last = [], {}
    for _ in range(runs):
        last = measure()
        samples.append(float(last.pop("seconds")))
    return samples, last


def machine() -> dict[str, Any]:
    return {"date": datetime.now(UTC).strftime("%Y-%m-%d"), "cores": os.cpu_count(),
            "python": platform.python_version(), "sqlite": sqlite3.sqlite_version,
            "platform": platform.platform()}


def suite_speed(out: Path, runs: int, serial: bool) -> list[Result]:
    """Wall time of `memconform run` against the reference; a run whose checks do not all pass
    is still timed, and its counts say so."""
    results = []
    modes = [("serial", []), ("2 workers", ["-n", "2"])] if serial else [("2 workers", ["-n", "2"])]
    for label, extra in modes:
        samples: list[float] = []
        counts: dict[str, int] = {}
        for number in range(runs):
            report = out / "suite" / f"{label.replace(' ', '-')}-{number}"
            started = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "memconform", "run", "-q",
                                   "--report-dir", str(report), *extra], capture_output=True,
                                  text=True, timeout=1800, check=False)
            samples.append(time.perf_counter() - started)
            if not (report / "report.jsonl").exists():
                raise RuntimeError(f"memconform run wrote no report: {done.stderr[-1500:]}")
            records = [json.loads(line) for line in
                       (report / "report.jsonl").read_text().splitlines()]
            statuses = [r["status"] for r in records if r.get("type") == "check"]
            counts = {"checks": len(statuses), "passed": statuses.count("pass")}
        results.append(Result(f"suite, {label}", "s", samples,
                              {**counts, "checks_per_s": round(counts["checks"] /
                                                               statistics.median(samples), 1)},
                              target=SUITE_TARGETS_S[label]))
    return results


def scans(work: Path, sizes: list[int], runs: int) -> list[Result]:
    results = []
    for size in sizes:
        home_with_threads(work, size)  # build outside the measured runs
        samples, last = repeat(runs, partial(probe, "scan", work=str(work), threads=size))
        results.append(Result(f"candidate scan, {size:,} threads", "s", samples, last,
                              target=0.5 if size >= 100_000 else None))
    return results


def selections(work: Path, sizes: list[int], limits: list[int], runs: int) -> list[Result]:
    results = []
    for size in sizes:
        for limit in limits:
            timed: list[dict[str, float]] = []

            def measure(size: int = size, limit: int = limit,
                        seen: list[dict[str, float]] = timed) -> dict[str, Any]:
                found = probe("select", work=str(work), outputs=size, limit=limit)
                seen.append({key: found.pop(key)
                             for key in ("materialize_seconds", "bare_loop_seconds")})
                return found

            samples, last = repeat(runs, measure)
            files = last.pop("files")
            results.append(Result(f"Phase-2 selection, {size:,} outputs, limit {limit}", "s",
                                  samples, last, target=0.5 if size >= 100_000 else None))
            materialize = [run["materialize_seconds"] for run in timed]
            ratio = statistics.median(run["materialize_seconds"] / run["bare_loop_seconds"]
                                      for run in timed)
            results.append(Result(
                f"materialization, {size:,} outputs, limit {limit}", "s", materialize,
                {"files": files, "bare_loop_median_s": round(statistics.median(
                    run["bare_loop_seconds"] for run in timed), 4),
                 "over_bare_loop": round(ratio, 2)},
                goal=(f"within {MATERIALIZE_OVER_BARE:g}x of a bare loop writing the same "
                      f"files", ratio <= MATERIALIZE_OVER_BARE)))
    return results


def contention(work: Path, processes: list[int], pool: int, runs: int) -> list[Result]:
    """Claims/s (claim and finish) for N racing processes beside bare cycles/s: the same two
    BEGIN IMMEDIATE transactions per job with one UPDATE each, on the same file.
    Every thread must be finished exactly once: one finished twice is a double commit; one
    never finished, or finished by a worker but not done in the file, is lost."""
    from memconform.home import create_db

    results = []
    for count in processes:
        rates, bare_rates, doubles, lost = [], [], 0, 0
        for run in range(runs):
            home = work / f"contention-{count}-{run}"
            shutil.rmtree(home, ignore_errors=True)
            home.mkdir(parents=True)
            create_db(home / "memories_1.sqlite", "memories_1")
            threads = [f"00000000-0000-7000-8000-{n:012d}" for n in range(pool)]
            wall, found = _race([probe_command(
                "claims", work=str(work), home=str(home), worker=f"w{n}",
                threads=threads if n % 2 == 0 else threads[::-1]) for n in range(count)])
            finished = [t for f in found for t in f["finished"]]
            doubles += len(finished) - len(set(finished))
            lost += len(set(threads) - set(finished))
            lost += abs(_done_rows(home) - len(set(finished)))  # the file must agree
            rates.append(len(finished) / wall)
            bare_db = sqlite3.connect(home / "memories_1.sqlite")
            bare_db.executescript("CREATE TABLE bench_counter (n INTEGER); INSERT INTO "
                                  "bench_counter VALUES (0);")
            bare_db.close()
            share = pool // count
            wall, _ = _race([probe_command("bare", work=str(work), home=str(home),
                                           cycles=share) for _ in range(count)])
            bare_rates.append(share * count / wall)
        ratio = statistics.median(bare_rates) / statistics.median(rates)
        results.append(Result(
            f"claim contention, {count} process(es)", "claims/s", rates,
            {"bare_cycles_per_s": round(statistics.median(bare_rates), 1),
             "bare_over_claims": round(ratio, 2), "double_commits": doubles, "lost": lost},
            goal=("within 2x of bare, no double commit", ratio <= 2.0 and doubles == lost == 0)))
    return results


def _done_rows(home: Path) -> int:
    """Stage-1 jobs the file itself records as done: it must agree with the workers' count."""
    con = sqlite3.connect(home / "memories_1.sqlite")
    try:
        (count,) = con.execute("SELECT count(*) FROM jobs WHERE kind = 'memory_stage1' AND "
                               "status = 'done'").fetchone()
    finally:
        con.close()
    return int(count)


def _race(commands: list[list[str]]) -> tuple[float, list[dict[str, Any]]]:
    """Start every command, wait until each says it is ready, let them all go at once; the wall
    time from the go to the last answer, and their JSON answers. A worker still running after
    RACE_TIMEOUT_S is killed, which fails the benchmark."""
    procs = [subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for command in commands]

    def kill_all() -> None:
        for proc in procs:
            proc.kill()

    deadline = threading.Timer(RACE_TIMEOUT_S, kill_all)
    deadline.start()
    try:
        for proc in procs:
            assert proc.stdout is not None
            if proc.stdout.readline().strip() != "ready":
                raise RuntimeError(f"contention worker failed to start: "
                                   f"{proc.communicate(timeout=60)[1][-1500:]}")
        started = time.perf_counter()
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        lines = [proc.stdout.readline() for proc in procs if proc.stdout is not None]
        wall = time.perf_counter() - started
        answers = [proc.communicate(timeout=RACE_TIMEOUT_S) for proc in procs]
    finally:
        deadline.cancel()
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    for proc, (_, err) in zip(procs, answers, strict=True):
        if proc.returncode != 0:
            raise RuntimeError(f"contention worker failed: {err[-1500:]}")
    return wall, [json.loads(line) for line in lines]


def read_path(work: Path, runs: int) -> list[Result]:
    labels = {"instructions": "instructions build (2,000-line summary)",
              "citations": "citation parsing, 1 MB message",
              "search": "tool search, 10 MB memory root"}
    results = []
    for operation, label in labels.items():
        samples, last = repeat(runs, partial(probe, "read-path", work=str(work),
                                             operation=operation))
        results.append(Result(label, "s", samples, last))
    return results


SUITE_TARGETS_S = {"serial": 25.0, "2 workers": 15.0}  # the whole local suite, the reference
MATERIALIZE_OVER_BARE = 3.0  # the median run's time over the bare loop's, run by run
LONG_LINE_MB = 50
LONG_LINE_TARGET_S = 2.0


def long_line(work: Path, runs: int) -> list[Result]:
    """Extraction input of one 50 MB rollout line: plain log text (target) and secret-dense."""
    results = []
    for secrets in (False, True):
        samples, last = repeat(runs, partial(probe, "long-line", work=str(work),
                                             megabytes=LONG_LINE_MB, secrets=secrets))
        last["per MB"] = f"{statistics.median(samples) / LONG_LINE_MB * 1000:.0f} ms"
        label = (f"stage-1 input of one {LONG_LINE_MB} MB rollout line"
                 + (", three secrets in every KB" if secrets else ""))
        results.append(Result(label, "s", samples, last,
                              target=None if secrets else LONG_LINE_TARGET_S))
    return results


def markdown(info: dict[str, Any], results: list[Result], notes: list[str]) -> str:
    lines = ["# memconform benchmarks", "",
             f"{info['date']} · {info['cores']} cores · Python {info['python']} · "
             f"SQLite {info['sqlite']} · {info['platform']}", "",
             "| benchmark | median | min to max | runs | target | details |",
             "|---|---:|---:|---:|---|---|"]
    for r in results:
        low, high = r.spread
        target = r.target_text and f"{r.target_text}: {'met' if r.met else '**missed**'}"
        details = ", ".join(f"{k} {v}" for k, v in r.extra.items())
        lines.append(f"| {r.name} | {_fmt(r.median, r.unit)} | {_fmt(low, r.unit)} to "
                     f"{_fmt(high, r.unit)} | {len(r.samples)} | {target} | {details} |")
    if notes:
        lines += ["", *(f"- {n}" for n in notes)]
    return "\n".join(lines) + "\n"


def _fmt(value: float, unit: str) -> str:
    if unit == "s":
        return f"{value * 1000:.1f} ms" if value < 1 else f"{value:.1f} s"
    return f"{value:,.0f} {unit}"


def run(out: Path, quick: bool, codex: bool) -> Path:
    work = out / "work"
    work.mkdir(parents=True, exist_ok=True)
    runs = 3 if quick else 5
    results = suite_speed(out, 1 if quick else 3, serial=not quick)
    results += scans(work, [1_000, 10_000, 100_000], runs)
    results += selections(work, [1_000, 10_000, 100_000], [256] if quick else [256, 4096], runs)
    results += contention(work, [1, 2, 4] if quick else [1, 2, 4, 8], 400 if quick else 2000,
                          1 if quick else 3)
    results += read_path(work, runs)
    results += long_line(work, 1 if quick else 3)
    notes = ["Claim contention: every process claims and finishes jobs from one shared pool "
             "(`claim_stage1`, then `succeeded_no_output`: two write transactions per job, as in "
             "Codex, where the model call sits between them); the bare loop does the same two "
             "`BEGIN IMMEDIATE` / one `UPDATE` / `COMMIT` rounds per cycle on the same file. "
             "Processes start together after set-up; every job must be done exactly once, in "
             "the workers' answers and in the file."]
    if codex:
        from memconform.bench.codex import beside_codex
        pairs, note = beside_codex(work, [1] if quick else [1, 10, 50], 1 if quick else 3)
        results += pairs
        notes.append(note)
    info = machine()
    (out / "benchmarks.json").write_text(json.dumps(
        {"machine": info, "quick": quick, "results": [r.row() for r in results],
         "notes": notes}, indent=1))
    path = out / "BENCHMARKS.md"
    path.write_text(markdown(info, results, notes))
    return path
