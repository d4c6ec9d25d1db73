"""Time and randomness for one operation, injected by the caller (never read from globals)."""

from __future__ import annotations

import random
import time
import uuid
from dataclasses import dataclass, field


@dataclass
class Runtime:
    """`now_ms` is fixed for the whole operation; ids come from a seeded generator."""

    now_ms: int
    seed: int = 0
    rng: random.Random = field(init=False, repr=False)
    started: float = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.started = time.monotonic()

    @property
    def now(self) -> int:
        """Whole Unix seconds."""
        return self.now_ms // 1000

    def elapsed_now(self) -> int:
        """`now` moved on by the wall time this operation has taken (for lease extensions,
        which must outlast a long run; records keep the fixed `now`)."""
        return self.now + int(time.monotonic() - self.started)

    def uuid4(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def uuid7(self) -> str:
        """A UUIDv7 whose 48-bit timestamp is `now_ms`."""
        value = (self.now_ms & ((1 << 48) - 1)) << 80
        value |= 0x7 << 76
        value |= self.rng.getrandbits(12) << 64
        value |= 0b10 << 62
        value |= self.rng.getrandbits(62)
        return str(uuid.UUID(int=value))
