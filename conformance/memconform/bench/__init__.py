"""`memconform bench`: the suite's speed, the reference at scale, claim contention, the read
path, and the reference beside the real Codex binary; each measured in whole processes."""
