"""Automated mutation testing of the reference with mutmut 3 (`memconform selftest --mutation`).

mutmut writes every mutant of `memref` into one trampolined copy of the package and runs, for
each mutant, the conformance checks that reach the mutated function (`pytest --pyargs
memconform.checks --impl ref`, in-process): a mutant is killed when a check reports `fail` or
`error`. Survivors are triaged: a check kills them, or `conformance/mutation/equivalent.toml`
says why no implementation could be told apart from the reference through the protocol.

- `workspace`: the cache directory mutmut works in, synced with the installed `memref`;
- `runner`: one mutmut run within a time budget;
- `triage`: the equivalent-mutant file;
- `results`: statuses per mutant and module, the score, the report files.
"""
