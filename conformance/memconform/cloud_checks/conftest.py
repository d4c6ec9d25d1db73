"""The cloud checks' fixtures (they were lost from the plugin when it was split)."""

from memconform.cloud.fixtures import cloud, cloud_service

__all__ = ["cloud", "cloud_service"]
