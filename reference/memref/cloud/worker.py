"""The worker loop: one extraction round over every user's completed tasks, again and again
(CLOUD-GATE-01)."""

from __future__ import annotations

import logging
import threading

from memref.cloud.app import Service

log = logging.getLogger(__name__)


def start(service: Service, interval_s: float) -> threading.Event:
    """Run rounds every `interval_s` seconds in a daemon thread; set the event to stop."""
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(interval_s):
            try:
                done = service.sweep()
                if done["extracted"]:
                    log.info("worker round extracted %s", done["extracted"])
            except Exception:  # a failed round is retried by the next one
                log.exception("worker round failed")

    threading.Thread(target=loop, name="auto-memory-worker", daemon=True).start()
    return stop
