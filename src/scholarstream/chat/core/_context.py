"""What the client tells the assistant about the page: every piece of dynamic UI state the
user can see (seed 002, "Context Design Principle"). Data items travel as summaries; the
``retrieve_items`` tool fetches full records when the model needs them."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

# A summary's own fields: short values the model can read and the analysis tool can count.
SummaryValue = str | int | float | bool | list[str] | None


class ItemSummary(BaseModel):
    """One data item on screen. ``kind`` names the retriever that can fetch the full record
    (``paper``, ``trial``, ``library_record``, ``search_result`` ...)."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, max_length=300)
    kind: str = Field(default="paper", max_length=40)
    title: str = Field(default="", max_length=2000)
    fields: dict[str, SummaryValue] = Field(
        default_factory=dict, description="Key fields the user sees: year, phase, status, score."
    )


class Pagination(BaseModel):
    page: int = Field(default=1, ge=1)
    page_size: int | None = Field(default=None, ge=1)


class Sort(BaseModel):
    column: str
    direction: Literal["asc", "desc"] = "asc"


class ResultCounts(BaseModel):
    total: int | None = None
    loaded: int | None = None
    filtered: int | None = None
    visible: int | None = None


class ChatContext(BaseModel):
    """The seed's ``ChatContext``. Pages may add their own keys (``extra="allow"``); their
    context builders read them, the rest of the system ignores them."""

    model_config = ConfigDict(extra="allow")

    current_page: str = Field(min_length=1, max_length=80)
    active_tab: str | None = Field(default=None, max_length=80)
    active_subtab: str | None = Field(default=None, max_length=80)
    report_id: str | None = None
    stream_id: str | None = None
    search_run_id: str | None = None
    current_article: dict[str, JsonValue] | None = None
    search_form: dict[str, JsonValue] | None = None
    filters: dict[str, JsonValue] | None = None
    pagination: Pagination | None = None
    sort: Sort | None = None
    selection: list[str] = Field(default_factory=list, description="Ids of selected items.")
    viewer: dict[str, JsonValue] | None = Field(
        default=None, description="The detail view that is open, if any."
    )
    results: ResultCounts | None = None
    item_summaries: list[ItemSummary] = Field(default_factory=list)

    def extras(self) -> dict[str, Any]:
        """The page's own keys, beyond the seed's common ones."""
        return dict(self.model_extra or {})

    def item(self, item_id: str) -> ItemSummary | None:
        return next((item for item in self.item_summaries if item.id == item_id), None)
