"""A settings PUT resets every key it does not send to its default."""

import sys
from typing import Any

from sqlalchemy import Connection

from memconform.mutants import Mutant, patch, serve_patched
from memref.cloud import settings
from memref.cloud.schema import settings as table

MUTANT = Mutant("c15-put-resets-unsent", __doc__ or "", ("cloud.settings.change",),
                profile="cloud")


def apply() -> None:
    def update(con: Connection, user_id: str, change: settings.SettingsUpdate,
               sent: set[str]) -> dict[str, Any]:
        values = {**settings.DEFAULTS, **{key: getattr(change, key) for key in sent}}
        con.execute(table.delete().where(table.c.user_id == user_id))
        con.execute(table.insert().values(user_id=user_id, **values))
        return values

    patch(settings, "update", update)


if __name__ == "__main__":
    sys.exit(serve_patched(apply))
