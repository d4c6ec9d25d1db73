"""An unknown bearer token is taken as the first user's."""

import sys
from typing import Any

from sqlalchemy import select

from memconform.mutants import Mutant, patch, serve_patched
from memref.cloud import access
from memref.cloud.schema import users

MUTANT = Mutant("c14-any-token-accepted", __doc__ or "",
                ("cloud.auth.required[unknown-get-settings]",
                 "cloud.auth.required[unknown-run]"), profile="cloud")
_user_for = access.user_for


def apply() -> None:
    def user_for(con: Any, authorization: str | None) -> str | None:
        found = _user_for(con, authorization)
        if found is None and (authorization or "").lower().startswith("bearer "):
            first = con.execute(select(users.c.id).order_by(users.c.id).limit(1)).scalar()
            return None if first is None else str(first)
        return found

    patch(access, "user_for", user_for)


if __name__ == "__main__":
    sys.exit(serve_patched(apply))
