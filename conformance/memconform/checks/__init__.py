"""The conformance checks: `pytest --pyargs memconform.checks --impl SPEC`."""
