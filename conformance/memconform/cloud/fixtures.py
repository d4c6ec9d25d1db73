"""The fixtures cloud checks use: the service under test (started once per test process) and
a client of it, emptied before each check. Registered by `memconform/cloud_checks/conftest.py`.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memconform.cloud.client import Cloud
from memconform.cloud.service import CloudSpecError, Service, start


@pytest.fixture(scope="session")
def cloud_service(pytestconfig: pytest.Config) -> Iterator[Service]:
    """The cloud service under test, started once per test process."""
    try:
        service = start(pytestconfig.getoption("--impl"), pytestconfig.getoption("--cloud-db"))
    except CloudSpecError as exc:
        raise pytest.UsageError(str(exc)) from exc
    yield service
    service.stop()


@pytest.fixture
def cloud(cloud_service: Service) -> Iterator[Cloud]:
    """A client of the cloud service, emptied for this check."""
    cloud_service.check_alive()
    client = Cloud(cloud_service.base_url, cloud_service.token)
    client.reset()
    yield client
    client.close()
