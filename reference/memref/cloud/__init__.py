"""The cloud variant of auto-memory: a multi-user control plane that extracts one
project-level memory per completed task and injects recent memories into a task's first turn.
Served over HTTP (`app.py`) on SQLite by default or PostgreSQL."""
