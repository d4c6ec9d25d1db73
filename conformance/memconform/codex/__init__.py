"""The real OpenAI Codex CLI 0.144.6 behind the adapter protocol (`--impl codex[:PATH]`),
driven black-box through `codex exec` against a loopback front for the model."""
