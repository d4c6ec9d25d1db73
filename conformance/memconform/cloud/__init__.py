"""The cloud profile's harness side: starting a service (the bundled reference on SQLite or a
throwaway PostgreSQL, or a mutant of it), and a client for its public and conformance APIs."""
