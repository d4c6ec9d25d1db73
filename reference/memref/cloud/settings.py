"""Per-user auto-memory settings: defaults (everything off) and the accepted values
(CLOUD-SET-01..03)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from sqlalchemy import Connection, select

from memref.cloud.db import check_text, insert_or_ignore
from memref.cloud.schema import settings

DEFAULTS: dict[str, Any] = {
    "generate_memories": False,
    "use_memories": False,
    "disable_on_external_context": True,
    "min_rate_limit_remaining_percent": 20,
    "idle_seconds": 900,
    "min_duration_seconds": 30,
    "min_result_chars": 200,
    "extract_model": None,
    "consolidation_model": None,
}
MAX_SECONDS = 30 * 86_400
MAX_CHARS = 1_000_000
# a model name: any text a database stores unchanged (no NUL, no lone surrogate)
ModelName = Annotated[str, AfterValidator(check_text)]


class SettingsUpdate(BaseModel):
    """A PUT body: any subset of the settings; unknown fields and wrong types are refused."""

    model_config = ConfigDict(extra="forbid", strict=True)

    generate_memories: bool | None = None
    use_memories: bool | None = None
    disable_on_external_context: bool | None = None
    min_rate_limit_remaining_percent: int | None = Field(None, ge=0, le=100)
    idle_seconds: int | None = Field(None, ge=0, le=MAX_SECONDS)
    min_duration_seconds: int | None = Field(None, ge=0, le=MAX_SECONDS)
    min_result_chars: int | None = Field(None, ge=0, le=MAX_CHARS)
    extract_model: ModelName | None = Field(None, min_length=1, max_length=200)
    consolidation_model: ModelName | None = Field(None, min_length=1, max_length=200)


NOT_NULL = ("generate_memories", "use_memories", "disable_on_external_context",
            "min_rate_limit_remaining_percent", "idle_seconds", "min_duration_seconds",
            "min_result_chars")


def read(con: Connection, user_id: str) -> dict[str, Any]:
    row = con.execute(select(settings).where(settings.c.user_id == user_id)).mappings().first()
    if row is None:
        return dict(DEFAULTS)
    return {key: row[key] for key in DEFAULTS}


def update(con: Connection, user_id: str, change: SettingsUpdate,
           sent: set[str]) -> dict[str, Any]:
    """Apply the fields that were sent; `null` clears a model name and is refused for the
    others (the caller checks that first). The user's row is created if missing, then locked,
    so concurrent updates apply one after the other and none is lost."""
    insert_or_ignore(con, settings, ["user_id"], user_id=user_id, **DEFAULTS)
    row = con.execute(select(settings).where(settings.c.user_id == user_id)
                      .with_for_update(key_share=True)).mappings().one()
    values = {key: row[key] for key in DEFAULTS}
    values.update({key: getattr(change, key) for key in sent})
    con.execute(settings.update().where(settings.c.user_id == user_id).values(**values))
    return values
