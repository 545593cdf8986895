"""Helpers of the screening API tests: a live server's client, the review imported into the
library, a project made of it, and screening as the review's own labels say."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import httpx

from scholarstream.settings import Settings
from tests.helpers import assert_plain
from tests.screening.world import EXCLUSION, INCLUSION, KEYWORDS, QUESTION, Review, triptans
from tests.web.live import Account, serve

API = "/api/v1/screening/projects"


@contextmanager
def client_for(
    settings: Settings, accounts: Sequence[Account] = ()
) -> Iterator[tuple[str, httpx.Client]]:
    with (
        serve(settings, accounts) as live,
        httpx.Client(
            base_url=live.base_url, timeout=60, headers={"Origin": live.base_url}
        ) as client,
    ):
        yield live.base_url, client


def import_review(client: httpx.Client, review: Review | None = None) -> Review:
    review = review or triptans()
    response = client.post(
        "/api/v1/library/imports", files={"file": ("triptans.csv", review.csv_bytes)}
    )
    assert response.status_code == 201, response.text
    return review


def new_project(client: httpx.Client, **overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "name": "Triptans for acute migraine",
        "question": QUESTION,
        "keywords": KEYWORDS,
        "inclusion_criteria": INCLUSION,
        "exclusion_criteria": EXCLUSION,
        "source": {"kind": "library"},
        **overrides,
    }
    response = client.post(API, json=body)
    assert response.status_code == 201, response.text
    project: dict[str, Any] = response.json()
    return project


def refused(response: httpx.Response, status: int, *words: str) -> dict[str, Any]:
    """An error answer with ``status`` whose message (and hint) say ``words``, plainly."""
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    said = f"{body['message']} {body.get('hint') or ''}"
    for word in words:
        assert word in said, (word, said)
    assert_plain(said)
    return body


def decide_as_review(
    client: httpx.Client, project_id: str, step: dict[str, Any], review: Review, **extra: Any
) -> dict[str, Any]:
    """Decides the record ``step`` shows as the review did; the next step."""
    record = step["record"]
    relevant = review.relevant(record["title"])
    body = {"record_id": record["id"], "decision": "include" if relevant else "exclude"}
    if not relevant:
        body["reason"] = EXCLUSION[0]
    response = client.post(f"{API}/{project_id}/decisions", json=body, params=extra)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result
