"""The extraction log endpoint lists every user's entries, not only the caller's."""

import sys
from typing import Any

from fastapi import FastAPI, Header, HTTPException
from fastapi.routing import APIRoute
from sqlalchemy import select

from memconform.mutants import Mutant, patch, serve_patched
from memref.cloud import access, app, serve
from memref.cloud.schema import extraction_log

MUTANT = Mutant("c19-log-shows-everyone", __doc__ or "",
                ("cloud.auth.runs-and-logs-isolated",), profile="cloud")
LOG = "/users/me/auto-memory-log"


def apply() -> None:
    def create_app(database_url: str, conformance_token: str | None = None) -> FastAPI:
        built = app.create_app(database_url, conformance_token)
        service = built.state.service
        built.router.routes = [r for r in built.router.routes
                               if not (isinstance(r, APIRoute) and r.path == LOG)]

        @built.get(LOG)
        def get_log(authorization: str | None = Header(None)) -> dict[str, Any]:
            with service.engine.begin() as con:
                if access.user_for(con, authorization) is None:
                    raise HTTPException(401, "unauthenticated")
                rows = con.execute(select(extraction_log)).mappings()
                return {"entries": [{"task_id": r["task_id"], "outcome": r["outcome"],
                                     "reason": r["reason"], "at": r["at"]} for r in rows]}

        return built

    patch(serve, "create_app", create_app)


if __name__ == "__main__":
    sys.exit(serve_patched(apply))
