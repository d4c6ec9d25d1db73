"""The cloud profile's checks: a control-plane auto-memory service driven over HTTP."""
