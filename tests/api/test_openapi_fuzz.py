"""The HTTP API fuzzed from its own OpenAPI document (issue 9, "Bad input").

schemathesis generates requests for every operation of ``/openapi.json``, both requests the
schema allows (``positive``) and requests it forbids (``negative``), and sends them to the
app in this process (its ASGI client). Every answer must be no server error, have a
documented status and content type, and match the documented schema (server-sent events
included: each event's data against the route's event models).

The app is authenticated as a real user: the local user of single-user mode (reached on
the loopback, as the Host check requires), or a user of multi-user mode with an API token
(Bearer). Before fuzzing, the test creates through the API (or the stores, for a stream)
what path ids can point at, and positive requests use these ids three times in four, so
operations are fuzzed past their 404s. Generation is derandomized: the same requests each
run. ``bench/fuzz_api.py`` runs the same fuzzing at length (1,500 requests and more).

What runs: every model role is pydantic-ai's ``TestModel``; literature sources answer a
well-formed "nothing found" (``httpx.MockTransport``); notifications are recorded, not
sent. The durable engine does not run here (DBOS, its queues and a search run's background
work belong to ``tests/search`` and the benchmark): the operations that start or signal a
durable workflow answer 503 ``engine_unavailable``, their documented answer in a process
without the engine, which is the only server error allowed, and only on them.
Server-sent event streams are read for at most ``SSE_SECONDS``: a research's progress
stream follows the research until it finishes, which a draft never does.

The fuzzing runs on SQLite and on PostgreSQL (marked ``postgres``), which refuses to store
a NUL character: the first positive request of each operation is sent again with a NUL
(U+0000) in one of its texts (path, query, JSON or form body), and that one must be
refused with 422 ``validation_error`` (issue 20).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from pydantic_ai.models.test import TestModel
from schemathesis import Case, GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import FailureGroup
from schemathesis.python import asgi
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from scholarstream.accounts import create_api_token, create_user, ensure_local_user
from scholarstream.bootstrap import create_app
from scholarstream.db import OwnerScope, upgrade
from scholarstream.notify import Delivery, Notification, Target
from scholarstream.settings import load_settings
from scholarstream.streams import StreamStore
from scholarstream.streams.core import PartialStreamConfig, finish_config
from scholarstream.streams.monitoring import run_stream_now
from tests.helpers import PASSWORD, make_runtime
from tests.streams.runner import runner

BASE_URL = "http://127.0.0.1"
MAX_EXAMPLES = 3  # per operation and generation mode: about 400 requests per app
SSE_SECONDS = 0.5
SEEDED_SHARE = 0.75
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
ENGINE_OPERATIONS = frozenset(
    {
        "POST /api/v1/search/runs",
        "POST /api/v1/search/runs/{run_id}/decisions",
        "POST /api/v1/search/runs/{run_id}/cancel",
        "POST /api/v1/research",
        "POST /api/v1/research/{research_id}/confirm",
        "POST /api/v1/research/{research_id}/retry",
        "POST /api/v1/streams/{stream_id}/runs",
    }
)
PAGES = ["home", "library", "search", "streams", "stream", "research", "trials"]
TARGET_URLS = ["json://hooks.example.com/fuzz", "ntfy://fuzz-topic"]
RIS = (
    "TY  - JOUR\nTI  - Setmelanotide for obesity caused by POMC deficiency\nAU  - Clement, K\n"
    "PY  - 2020\nAB  - A melanocortin 4 receptor agonist reduced weight.\nER  -\n"
    "TY  - JOUR\nTI  - Bremelanotide for hypoactive sexual desire disorder\nAU  - Kingsberg, S\n"
    "PY  - 2019\nAB  - Two phase 3 trials of a melanocortin agonist.\nER  -\n"
)
STREAM = {
    "purpose": "Track melanocortin programs",
    "business_goals": ["Track competitive landscape"],
    "expected_outcomes": "Go/no-go decisions",
    "stream_name": "Melanocortin tracker",
    "stream_type": "competitive",
    "focus_areas": ["Obesity"],
    "keywords": ["setmelanotide", "melanocortin"],
    "competitors": ["Palatin Technologies"],
    "report_frequency": "weekly",
}
_EMPTY: dict[str, object] = {
    "ncbi": {"esearchresult": {"count": "0", "retmax": "0", "retstart": "0", "idlist": []}},
    "openalex": {"meta": {"count": 0}, "results": []},
    "semanticscholar": {"total": 0, "offset": 0, "data": []},
    "crossref": {"status": "ok", "message": {"total-results": 0, "items": []}},
    "clinicaltrials": {"studies": [], "totalCount": 0},
    "serpapi": {"search_information": {"total_results": 0}, "organic_results": []},
}
_ARXIV_EMPTY = (
    '<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom" '
    'xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">'
    "<opensearch:totalResults>0</opensearch:totalResults></feed>"
)


def nothing_found(request: httpx.Request) -> httpx.Response:
    """Every literature source answers a well-formed 'nothing found'."""
    if "arxiv" in request.url.host:
        return httpx.Response(200, text=_ARXIV_EMPTY)
    body = next((b for marker, b in _EMPTY.items() if marker in request.url.host), None)
    return httpx.Response(200, json=body) if body is not None else httpx.Response(404)


class RecordingNotifier:
    def __init__(self) -> None:
        self.sent: list[Notification] = []

    async def send(self, notification: Notification, targets: Sequence[Target]) -> list[Delivery]:
        self.sent.append(notification)
        return [
            Delivery(target_id=t.id, label=t.label, preview=t.preview, ok=True) for t in targets
        ]


@dataclass
class Fuzzing:
    schema: Any
    client: asgi.ASGIClient
    headers: dict[str, str]
    document: dict[str, Any]
    ids: dict[str, list[str]] = field(default_factory=dict)
    requests: int = 0
    nul_requests: int = 0
    nul_operations: set[str] = field(default_factory=set)
    statuses: dict[int, int] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)

    def api(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self.client.request(
            method, f"{BASE_URL}/api/v1{path}", headers=self.headers, timeout=30, **kwargs
        )
        assert response.status_code < 300, f"{method} {path}: {response.text}"
        return response

    def seed(self, stream_id: str, report_id: str) -> None:
        """Resources for path ids: library records, a token, an AI column, a conversation
        with an objective, a creation, a stream with a report and a target, a draft, a
        collection, a screening project and one of its records."""
        ids = self.ids
        ids.update(provider=["openai"], name=["library", "pubmed"], action=["run_search"])
        files = {"file": ("seed.ris", RIS.encode(), "application/x-research-info-systems")}
        self.api("POST", "/library/imports", files=files)
        ids["record_id"] = [r["id"] for r in self.api("GET", "/library/records").json()["items"]]
        ids["token_id"] = [self.api("POST", "/tokens", json={"name": "seeded"}).json()["id"]]
        column = {"table": "library", "name": "R", "criteria": "Agonists?", "output_type": "yes_no"}
        ids["column_id"] = [self.api("POST", "/ai-columns", json=column).json()["id"]]
        chat = {"message": "/help", "context": {"current_page": "library"}}
        answer = self.api("POST", "/chat/messages", json=chat).text
        status = json.loads(answer.split("data: ", 1)[1].split("\n", 1)[0])
        conversation = status["conversation_id"]
        ids["conversation_id"], ids["turn_id"] = [conversation], [status["turn_id"]]
        objective = self.api(
            "POST", f"/chat/conversations/{conversation}/objectives", json={"text": "Trials"}
        ).json()
        ids["objective_id"] = [str(objective["id"])]
        ids["creation_id"] = [self.api("POST", "/streams/creation").json()["id"]]
        ids["stream_id"] = [stream_id]
        ids["report_id"] = [report_id]
        ids["target_id"] = [
            self.api("POST", "/me/notifications", json={"url": TARGET_URLS[0]}).json()["id"],
            self.api(
                "POST", f"/streams/{stream_id}/notifications", json={"url": TARGET_URLS[1]}
            ).json()["id"],
        ]
        draft = self.api("POST", "/research/draft", json={"prompt": "Melanocortin agonists?"})
        ids["research_id"] = [draft.json()["id"]]
        collection = {"name": "Seeded", "ids": ids["record_id"]}
        made = self.api("POST", "/library/collections", json=collection).json()
        ids["collection_id"] = [made["collection"]["id"]]
        review = {
            "name": "Seeded review",
            "exclusion_criteria": ["Wrong population"],
            "source": {"kind": "library", "record_ids": ids["record_id"]},
        }
        project = self.api("POST", "/screening/projects", json=review).json()["id"]
        ids["project_id"] = [project]
        step = self.api("GET", f"/screening/projects/{project}/next").json()
        ids["record_id"] = [*ids["record_id"], step["record"]["id"]]  # a project's record

    def fail(self, case: Case[Any], check: str, status: int, detail: str) -> None:
        key = f"{case.operation.label} | {check} | {status}"
        self.failures.setdefault(key, f"{case.as_curl_command()}\n{detail[:1200]}")


def point_at_seeded(case: Case[Any], data: st.DataObject, ids: dict[str, list[str]]) -> None:
    """Three times in four, a path parameter naming a resource gets a seeded one's id, and
    a page, a notification URL or a research id one that exists."""

    def swap(container: dict[str, Any] | None, key: str, choices: Sequence[Any]) -> None:
        if not (container and key in container and choices):
            return
        if data.draw(st.floats(0, 1)) < SEEDED_SHARE:
            container[key] = data.draw(st.sampled_from(choices))

    for name in list(case.path_parameters or {}):
        swap(case.path_parameters, name, ids.get(name, []))
    swap(case.query, "page", PAGES)
    if isinstance(case.body, dict):
        swap(case.body, "url", TARGET_URLS)
        swap(case.body, "researchId", ids["research_id"])
        context = case.body.get("context")
        swap(context if isinstance(context, dict) else None, "current_page", PAGES)


def text_slots(node: Any) -> Iterator[tuple[Any, Any]]:
    """(container, key) of every string in a case's path parameters, query or body."""
    items = node.items() if isinstance(node, dict) else enumerate(node)
    for key, value in list(items):
        if isinstance(value, str):
            yield node, key
        elif isinstance(value, (dict, list)):
            yield from text_slots(value)


def uploaded_files(document: dict[str, Any], case: Case[Any]) -> set[str] | None:
    """The fields of a multipart body that are files (their content is no text input);
    None for another body."""
    if not (case.media_type or "").startswith("multipart/"):
        return None
    raw = case.operation.definition.raw["requestBody"]["content"][case.media_type]["schema"]
    schema = document["components"]["schemas"][raw["$ref"].rsplit("/", 1)[1]]
    return {
        name
        for name, field_schema in schema.get("properties", {}).items()
        if "contentMediaType" in field_schema or field_schema.get("format") == "binary"
    }


def inject_nul(case: Case[Any], data: st.DataObject, document: dict[str, Any]) -> bool:
    """Puts a NUL character into one text of ``case``; False if it has none."""
    parts = (case.path_parameters, case.query, case.body)
    files = uploaded_files(document, case)
    slots = [
        (container, key)
        for part in parts
        if isinstance(part, (dict, list))
        for container, key in text_slots(part)
        # A multipart form: its top-level texts only (a nested value is sent as JSON).
        if files is None or (container is case.body and key not in files)
    ]
    if not slots:
        return False
    container, key = data.draw(st.sampled_from(slots))
    text = container[key]
    at = data.draw(st.integers(0, len(text)))
    container[key] = f"{text[:at]}\x00{text[at:]}"
    return True


def send(fuzzing: Fuzzing, case: Case[Any], *, streams: bool, with_nul: bool = False) -> None:
    """Sends ``case`` and checks the answer; ``with_nul``: it must be a 422 too."""
    fuzzing.requests += 1
    if with_nul:
        fuzzing.nul_requests += 1
        fuzzing.nul_operations.add(case.operation.label)
    try:
        response = case.call(
            session=fuzzing.client,
            base_url=BASE_URL,
            headers=fuzzing.headers,
            timeout=SSE_SECONDS if streams else 30,
        )
    except Exception as exc:  # the app raised: a 500 the client never got
        fuzzing.fail(case, "exception", 500, f"{type(exc).__name__}: {exc}")
        return
    status = response.status_code
    fuzzing.statuses[status] = fuzzing.statuses.get(status, 0) + 1
    if with_nul and (status != 422 or response.json().get("code") != "validation_error"):
        fuzzing.fail(case, "nul_refused", status, response.text[:400])
    checks = CHECKS
    no_engine = status == 503 and response.json().get("code") == "engine_unavailable"
    if no_engine and case.operation.label in ENGINE_OPERATIONS:
        checks = [c for c in CHECKS if c is not not_a_server_error]
    try:
        case.validate_response(response, checks=checks, headers=fuzzing.headers)
    except FailureGroup as group:
        for failure in group.exceptions:
            detail = f"{failure.title}\n{failure.message}\n{response.text[:400]}"
            fuzzing.fail(case, type(failure).__name__, status, detail)


def fuzz_operation(fuzzing: Fuzzing, operation: Any, mode: GenerationMode) -> None:
    streams = "text/event-stream" in json.dumps(operation.definition.raw.get("responses"))
    nul_sent = False

    @settings(
        max_examples=MAX_EXAMPLES,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.explicit, Phase.generate],
    )
    @given(case=operation.as_strategy(generation_mode=mode), data=st.data())
    def run(case: Case[Any], data: st.DataObject) -> None:
        nonlocal nul_sent
        if mode is GenerationMode.POSITIVE:
            point_at_seeded(case, data, fuzzing.ids)
        send(fuzzing, case, streams=streams)
        # Once per operation, the same request again with a NUL in one of its texts.
        if mode is GenerationMode.POSITIVE and not nul_sent:
            nul_sent = inject_nul(case, data, fuzzing.document)
            if nul_sent:
                send(fuzzing, case, streams=streams, with_nul=True)

    try:
        run()
    except Exception as exc:
        # Nothing to generate (a negative case of an operation without parameters).
        if type(exc).__name__ != "Unsatisfiable":
            raise


async def prepare(settings: Any, *, multi_user: bool) -> tuple[str | None, str, str]:
    """The caller (a token in multi-user mode), a stream of theirs (the stream guide makes
    one only through a conversation, which TestModel does not hold) and a report of it (run
    here: runs started over the API need the durable engine)."""
    runtime = make_runtime(settings, source_transport=httpx.MockTransport(nothing_found))
    try:
        token = None
        async with runtime.database.session() as session:
            if multi_user:
                user = await create_user(session, "fuzzer", PASSWORD)
                _, token = await create_api_token(OwnerScope(session, user.id), "fuzzing")
            else:
                user = await ensure_local_user(session)
            owner: uuid.UUID = user.id
        config = finish_config(PartialStreamConfig.model_validate(STREAM))
        stream = await StreamStore(runtime.database).create(owner, config)
        report = await run_stream_now(runner(runtime), owner, stream.id)
        return token, str(stream.id), str(report.id)
    finally:
        await runtime.close()


@pytest.fixture(params=["single-user", "multi-user"])
def fuzzing(request: pytest.FixtureRequest, data_dir: Path, database_url: str) -> Iterator[Fuzzing]:
    """The app fuzzed on each database (``database_url``: SQLite, and PostgreSQL when the
    test server is configured) in each mode."""
    multi_user = request.param == "multi-user"
    settings = load_settings(
        data_dir=data_dir,
        database_url=database_url,
        # Saving a notification target in multi-user mode looks its host up in the DNS
        # (the SSRF check, tested in tests/notify); the fuzzer invents host names.
        server={"multi_user": multi_user, "allow_private_notification_hosts": True},
        sources={"serpapi_api_key": "fuzz-key"},
    )
    upgrade(settings.app_database_url)
    token, stream_id, report_id = asyncio.run(prepare(settings, multi_user=multi_user))
    runtime = make_runtime(
        settings,
        models={"default": TestModel()},
        source_transport=httpx.MockTransport(nothing_found),
        notifier=RecordingNotifier(),
    )
    app = create_app(runtime)
    config = schemathesis.Config.from_dict({"base-url": BASE_URL})
    document = app.openapi()
    schema = schemathesis.openapi.from_dict(document, config=config)
    schema.app = app
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    # schemathesis types an ASGI app with dict scopes, Starlette with MutableMappings.
    client = asgi.get_client(cast("Any", app))
    client.base_url = BASE_URL
    try:
        with client:
            fuzzing = Fuzzing(schema, client, headers, document)
            fuzzing.seed(stream_id, report_id)
            yield fuzzing
    finally:
        asgi.shutdown_lifespans()


# schemathesis draws from ``random`` inside its strategies, which hypothesis warns about.
@pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisDeprecationWarning")
def test_every_operation_answers_as_documented(fuzzing: Fuzzing) -> None:
    operations = [result.ok() for result in fuzzing.schema.get_all_operations()]
    # DELETEs last (the deepest paths first), so that the others find the seeded resources.
    operations.sort(key=lambda op: (op.method.lower() == "delete") * (100 - op.path.count("/")))
    for operation in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            fuzz_operation(fuzzing, operation, mode)
    print(
        f"{fuzzing.requests} requests ({fuzzing.nul_requests} with a NUL, in "
        f"{len(fuzzing.nul_operations)} of {len(operations)} operations), "
        f"statuses {sorted(fuzzing.statuses.items())}"
    )
    report = "\n\n".join(f"{key}\n{text}" for key, text in fuzzing.failures.items())
    assert not fuzzing.failures, f"{len(fuzzing.failures)} kinds of failure:\n\n{report}"
    assert fuzzing.requests >= 2 * len(operations), fuzzing.requests
    # Nearly every operation takes a text; each got a NUL in one at least.
    assert len(fuzzing.nul_operations) >= len(operations) // 2, sorted(fuzzing.nul_operations)
    assert sum(n for s, n in fuzzing.statuses.items() if s < 300) > fuzzing.requests // 5


# What the fuzzer found, each once (every one was a 500 before).
RESEARCH = "/api/v1/research/8f5c2a7e-3b1d-4c6a-9e0f-2d4b6a8c0e1f/events"  # no such research
FOUND = [
    ("/api/v1/chat/config?page=", {}, 422, "validation_error"),
    (f"/api/v1/library/records?offset={10**30}", {}, 422, "validation_error"),
    ("/api/v1/sources/library/search?q=x&date_to=0110-02-08", {}, 422, "bad_query"),
    (f"/api/v1/sources/library/search?q=x&page_token={10**30}", {}, 422, "bad_query"),
    ("/api/v1/sources/library/search?q=x&page_token=%C2%B2", {}, 422, "invalid_input"),
    (f"{RESEARCH}?after={10**30}", {}, 422, "validation_error"),
    (RESEARCH, {"Last-Event-ID": str(10**30)}, 422, "validation_error"),
]


@pytest.mark.parametrize(("path", "headers", "status", "code"), FOUND)
def test_what_the_fuzzer_found_is_refused(
    client: TestClient, path: str, headers: dict[str, str], status: int, code: str
) -> None:
    response = client.get(path, headers=headers)
    assert response.status_code == status, response.text
    assert response.json()["code"] == code


def test_a_search_run_without_the_engine_is_refused(client: TestClient) -> None:
    response = client.post("/api/v1/search/runs", json={"question": "melanocortin agonists"})
    assert response.status_code == 503, response.text
    assert response.json()["code"] == "engine_unavailable"


def test_errors_of_event_stream_routes_are_documented_as_json(client: TestClient) -> None:
    document = client.get("/openapi.json").json()
    operation = document["paths"]["/api/v1/chat/messages"]["post"]
    assert list(operation["responses"]["4XX"]["content"]) == ["application/json"]
    event = operation["responses"]["200"]["content"]["text/event-stream"]["schema"]
    payload = event["properties"]["data"]["contentSchema"]
    assert payload["discriminator"]["propertyName"] == "type"
    assert "StatusEvent" in document["components"]["schemas"]


def test_a_body_that_cannot_be_read_is_a_400_with_a_hint(client: TestClient) -> None:
    headers = {"content-type": "application/json"}
    response = client.post("/api/v1/tokens", content=b"q\xff", headers=headers)
    assert response.status_code == 400, response.text
    assert response.json()["code"] == "bad_request"
    assert "UTF-8" in response.json()["hint"]
