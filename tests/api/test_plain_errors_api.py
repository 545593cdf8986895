"""A request the API cannot read is refused in the product's words (422 ``validation_error``):
each field named for a person in ``message`` (``context``, ``item_summaries, item 19``,
``title`` joined by ``THEN``) and for a program in ``field``
(``context.item_summaries.18.title``); never pydantic's text, its links, its paths or its
error class names."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.helpers import assert_plain

THEN = " \N{SINGLE RIGHT-POINTING ANGLE QUOTATION MARK} "  # between nested field names
CHAT = "/api/v1/chat/messages"
CONTEXT = {"current_page": "library"}
FIELDS_HINT = "Correct the named fields and send the request again."
BODY_HINT = "Send the request body as a JSON object, as /docs shows for this operation."

Fields = list[tuple[str, str]]


def refused(response: Any) -> tuple[str, Fields, str]:
    """Message, (field, message) pairs and hint of a 422 in the product's words."""
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["code"] == "validation_error", body
    assert body["request_id"] == response.headers["x-request-id"]
    assert_plain(response.text)
    assert "body." not in response.text, body
    return body["message"], [(f["field"], f["message"]) for f in body["fields"]], body["hint"]


def post_raw(client: TestClient, path: str, content: bytes) -> Any:
    return client.post(path, content=content, headers={"content-type": "application/json"})


def item(n: int, **fields: Any) -> dict[str, Any]:
    return {"id": f"item-{n}", "title": f"Item {n}", **fields}


CHAT_BODIES: list[tuple[object, str, Fields]] = [
    (
        {},
        "The request is not valid: message is required; context is required.",
        [("message", "message is required"), ("context", "context is required")],
    ),
    (
        {"message": 5, "context": "library"},
        "The request is not valid: message must be text; context must be a JSON object.",
        [("message", "message must be text"), ("context", "context must be a JSON object")],
    ),
    (
        {"message": "hi", "context": CONTEXT, "conversation_id": "conversation-1"},
        "The request is not valid: conversation_id must be an id as returned by the API.",
        [("conversation_id", "conversation_id must be an id as returned by the API")],
    ),
    (
        {"message": "   ", "context": CONTEXT},
        "The request is not valid: message: it is empty: type a question or a /command.",
        [("message", "message: it is empty: type a question or a /command")],
    ),
    (
        {
            "message": "hi",
            "context": {
                **CONTEXT,
                "item_summaries": [*(item(n) for n in range(18)), item(18, title=5)],
            },
        },
        f"The request is not valid: context{THEN}item_summaries, item 19{THEN}title must be text.",
        [
            (
                "context.item_summaries.18.title",
                f"context{THEN}item_summaries, item 19{THEN}title must be text",
            )
        ],
    ),
    (
        # A field that takes one of several kinds: one problem, with the kinds it takes.
        {"message": "hi", "context": {**CONTEXT, "item_summaries": [item(0, fields={"y": {}})]}},
        f"The request is not valid: context{THEN}item_summaries, item 1{THEN}fields{THEN}y must "
        "be text, a number, true or false or a list.",
        [
            (
                "context.item_summaries.0.fields.y",
                f"context{THEN}item_summaries, item 1{THEN}fields{THEN}y must be text, a number, "
                "true or false or a list",
            )
        ],
    ),
    (
        {
            "message": "hi",
            "context": {
                "current_page": "",
                "pagination": {"page": 0},
                "sort": {"column": "year", "direction": "up"},
                "selection": ["a", 2],
                "item_summaries": [{"id": "a", "colour": "red"}],
            },
        },
        f"The request is not valid: context{THEN}current_page must not be empty; "
        f"context{THEN}pagination{THEN}page must be at least 1; "
        f"context{THEN}sort{THEN}direction must be one of: asc, desc; "
        f"context{THEN}selection, item 2 must be text; "
        f"context{THEN}item_summaries, item 1{THEN}colour is not a field of this request; "
        "remove it.",
        [
            ("context.current_page", f"context{THEN}current_page must not be empty"),
            ("context.pagination.page", f"context{THEN}pagination{THEN}page must be at least 1"),
            (
                "context.sort.direction",
                f"context{THEN}sort{THEN}direction must be one of: asc, desc",
            ),
            ("context.selection.1", f"context{THEN}selection, item 2 must be text"),
            (
                "context.item_summaries.0.colour",
                f"context{THEN}item_summaries, item 1{THEN}colour is not a field of this "
                "request; remove it",
            ),
        ],
    ),
    (
        {"message": "hi", "context": {"current_page": "x" * 81}},
        f"The request is not valid: context{THEN}current_page must be at most 80 characters.",
        [("context.current_page", f"context{THEN}current_page must be at most 80 characters")],
    ),
]


@pytest.mark.parametrize(("body", "message", "fields"), CHAT_BODIES)
def test_a_bad_chat_message_is_refused_in_plain_words(
    client: TestClient, body: object, message: str, fields: Fields
) -> None:
    said, named, hint = refused(client.post(CHAT, json=body))
    assert (said, named, hint) == (message, fields, FIELDS_HINT)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"[]", "The request body must be a JSON object."),
        (b'"hello"', "The request body must be a JSON object."),
        (b"null", "The request body must be a JSON object."),
        (
            b"{",
            "The request body is not valid JSON: expecting property name enclosed in double "
            "quotes (at character 1).",
        ),
        (
            b"not json at all",
            "The request body is not valid JSON: expecting value (at character 0).",
        ),
    ],
)
def test_a_body_of_the_wrong_shape_says_so_once(
    client: TestClient, content: bytes, message: str
) -> None:
    for path in (CHAT, "/api/v1/search/runs"):
        said, named, hint = refused(post_raw(client, path, content))
        assert said == message
        # The field's message as it reads in a list of problems: no capital, no full stop.
        assert named == [("body", message[:1].lower() + message[1:-1])]
        assert hint == BODY_HINT
    said, named, _ = refused(client.post("/api/v1/search/runs"))  # no body at all
    assert (said, named) == (
        "The request body is required.",
        [("body", "the request body is required")],
    )


LIBRARY: list[tuple[str, str, Fields]] = [
    (
        "/api/v1/library/records?limit=abc&year_from=x",
        "The request is not valid: year_from must be a whole number; limit must be a whole number.",
        [
            ("query.year_from", "year_from must be a whole number"),
            ("query.limit", "limit must be a whole number"),
        ],
    ),
    (
        "/api/v1/library/records?limit=0",
        "The request is not valid: limit must be at least 1.",
        [("query.limit", "limit must be at least 1")],
    ),
    (
        "/api/v1/library/records?limit=501",
        "The request is not valid: limit must be at most 500.",
        [("query.limit", "limit must be at most 500")],
    ),
    (
        f"/api/v1/library/records?offset={10**30}",
        "The request is not valid: offset must be at most 2147483647.",
        [("query.offset", "offset must be at most 2147483647")],
    ),
    (
        "/api/v1/library/records/not-an-id",
        "The request is not valid: record_id must be an id as returned by the API.",
        [("path.record_id", "record_id must be an id as returned by the API")],
    ),
    (
        "/api/v1/sources/library/search?q=x&date_from=2020-13-01",
        "The request is not valid: date_from must be a date like 2024-05-31.",
        [("query.date_from", "date_from must be a date like 2024-05-31")],
    ),
]


@pytest.mark.parametrize(("path", "message", "fields"), LIBRARY)
def test_a_bad_library_request_is_refused_in_plain_words(
    client: TestClient, path: str, message: str, fields: Fields
) -> None:
    said, named, _ = refused(client.get(path))
    assert (said, named) == (message, fields)


def test_an_import_without_a_file_and_a_search_with_its_dates_reversed(
    client: TestClient,
) -> None:
    said, named, _ = refused(client.post("/api/v1/library/imports", data={"format": "ris"}))
    assert (said, named) == (
        "The request is not valid: file is required.",
        [("file", "file is required")],
    )

    # Read by the route into a query of its own: the same words, as a product error.
    reversed_dates = client.get(
        "/api/v1/sources/library/search",
        params={"q": "x", "date_from": "2020-01-01", "date_to": "2010-01-01"},
    )
    assert reversed_dates.status_code == 422
    assert reversed_dates.json()["code"] == "invalid_input"
    assert reversed_dates.json()["message"] == "Invalid search: date_from is after date_to."


SEARCH: list[tuple[str, str, object, str, Fields]] = [
    (
        "POST",
        "/api/v1/search/runs",
        {"question": "  "},
        "The request is not valid: question: the question is empty; describe what you are "
        "looking for.",
        [("question", "question: the question is empty; describe what you are looking for")],
    ),
    (
        "POST",
        "/api/v1/search/runs",
        {"question": "statins", "sources": "pubmed", "max_iterations": 99, "colour": "red"},
        "The request is not valid: sources must be a list; max_iterations must be at most 20; "
        "colour is not a field of this request; remove it.",
        [
            ("sources", "sources must be a list"),
            ("max_iterations", "max_iterations must be at most 20"),
            ("colour", "colour is not a field of this request; remove it"),
        ],
    ),
    (
        "POST",
        "/api/v1/search/runs",
        {"question": "statins", "results_per_source": 2.5, "offline": "perhaps"},
        "The request is not valid: results_per_source must be a whole number; offline must be "
        "true or false.",
        [
            ("results_per_source", "results_per_source must be a whole number"),
            ("offline", "offline must be true or false"),
        ],
    ),
    (
        "POST",
        "/api/v1/search/runs/00000000-0000-0000-0000-000000000000/decisions",
        {"action": "maybe"},
        "The request is not valid: action must be one of: approve, edit, reject; checkpoint_id "
        "is required.",
        [
            ("action", "action must be one of: approve, edit, reject"),
            ("checkpoint_id", "checkpoint_id is required"),
        ],
    ),
    (
        "GET",
        "/api/v1/search/runs?limit=0",
        None,
        "The request is not valid: limit must be at least 1.",
        [("query.limit", "limit must be at least 1")],
    ),
    (
        "GET",
        "/api/v1/search/runs/run-7",
        None,
        "The request is not valid: run_id must be an id as returned by the API.",
        [("path.run_id", "run_id must be an id as returned by the API")],
    ),
    (
        "POST",
        "/api/v1/sources/search",
        {"sources": [], "query": {"text": "x", "date_from": "2020-13-01", "limit": 0}},
        f"The request is not valid: sources must have at least 1 item; query{THEN}limit must be "
        f"at least 1; query{THEN}date_from must be a date like 2024-05-31.",
        [
            ("sources", "sources must have at least 1 item"),
            ("query.limit", f"query{THEN}limit must be at least 1"),
            ("query.date_from", f"query{THEN}date_from must be a date like 2024-05-31"),
        ],
    ),
]


@pytest.mark.parametrize(("method", "path", "body", "message", "fields"), SEARCH)
def test_a_bad_search_request_is_refused_in_plain_words(
    client: TestClient, method: str, path: str, body: object, message: str, fields: Fields
) -> None:
    said, named, _ = refused(client.request(method, path, json=body))
    assert (said, named) == (message, fields)


def test_a_header_and_our_own_validators_read_as_sentences(client: TestClient) -> None:
    events = "/api/v1/research/00000000-0000-0000-0000-000000000000/events"
    said, named, _ = refused(client.get(events, headers={"Last-Event-ID": "soon"}))
    assert said == "The request is not valid: header last-event-id must be a whole number."
    assert named == [("header.last-event-id", "header last-event-id must be a whole number")]

    # A model validator about the whole body: its sentence, as written, capitalised.
    said, named, _ = refused(client.post("/api/v1/models/check", json={}))
    assert said == "Name a role, a model or an endpoint to check."
    assert named == [("body", "name a role, a model or an endpoint to check")]

    # A custom error of ours that reads after the field's name.
    column = {"table": "papers", "name": "n", "criteria": "c", "output_type": "yes_no"}
    said, _, _ = refused(client.post("/api/v1/ai-columns", json=column))
    assert said == (
        "The request is not valid: table must be one of the results tables with AI columns: "
        "library, search, trials."
    )
