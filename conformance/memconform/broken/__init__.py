"""Deliberately broken stdio adapters: each must make every check `error`, never pass/fail.

Run as `--impl exec:"python -m memconform.broken.NAME"`.
"""

NAMES = ("exits_at_start", "non_json", "wrong_seq", "hangs", "bad_shape")
