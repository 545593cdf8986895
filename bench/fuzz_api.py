"""Fuzzing the HTTP API from its OpenAPI schema (issue 9, "Bad input"): how many generated
requests, what they were answered, and whether any answer was a server error or broke the
schema the API publishes.

The app runs in this process as ``scholarstream serve`` builds it (``build_runtime`` +
``create_app``, a fresh SQLite data directory migrated with ``scholarstream.db.upgrade``),
reached through schemathesis' in-process ASGI client. What differs from a real server:

- the literature sources answer from an empty world (``httpx.MockTransport``: each source
  answers a well-formed "nothing found"), and every socket connection outside the loopback
  is refused, so no request leaves the machine;
- notifications go to a recording notifier, not apprise (the fuzzer invents URLs), and
  private notification hosts are allowed in multi-user mode (its SSRF check would look
  every invented host name up in the DNS);
- with ``--models test`` (the default) every model role is pydantic-ai's ``TestModel``;
  ``--models offline`` runs offline mode (no model configured: AI column values then
  answer their documented 503 offline_mode, counted apart from the 5xx);
- with ``--engine`` (the default) the durable engine (DBOS on SQLite) runs as in
  ``scholarstream serve``: search runs really start (and wait at their first checkpoint
  until the engine shuts down); ``--no-engine`` leaves it out (the routes that start or
  signal a durable workflow then answer 503 engine_unavailable, counted apart).

The caller is the local user of single-user mode (``--mode single``, on the loopback), or
a user of multi-user mode with an API token (``--mode multi``, Bearer). Before each pass
the benchmark creates, through the API, what path ids can point at: library records (an
RIS import), an API token, an AI column, a chat conversation with an objective, a stream
creation, a stream report and notification targets, a research draft, a search run; the
streams themselves are made through the store before start-up (the guide makes one only
through a conversation, which ``TestModel`` does not hold). In positive cases, path
parameters get these ids three times in four, and a chat page, a notification URL, a
source list or a research id one that exists, so that operations are fuzzed past their
404s and 422s.

Each operation is fuzzed in both generation modes of schemathesis: ``positive`` (requests
the schema allows) and ``negative`` (requests it forbids), with hypothesis seeded per pass
(``--seed`` + pass: deterministic). Passes repeat until --requests requests are made;
DELETEs come last in a pass (the deepest paths first), so the other operations find the
seeded resources. Checks on every response: ``not_a_server_error`` (no 5xx),
``status_code_conformance`` (the status is documented), ``content_type_conformance``,
``response_schema_conformance`` (the body, and each server-sent event's data, matches the
documented schema). Negative cases also go through ``negative_data_rejection``; what it
finds (a request the schema forbids, served) is listed as "accepted invalid requests" and
does not fail the run: pydantic's lax mode takes ``true`` for 1, which the schema forbids.

Server-sent event streams (chat answers, stream-guide turns, research progress) are read
for at most --sse-timeout seconds or 20 events: research progress streams until the
research finishes, which a draft never does.

    python bench/fuzz_api.py [--requests 1500] [--mode single|multi] [--models test|offline]
                             [--no-engine] [--sse-timeout 1.0] [--seed 0]
                             [--json bench/results/fuzz_api.json]

Exit status 1 if any response was a 5xx or failed a check, if seeding failed, or if fewer
than min(--requests, 1000) requests were made. ``DEFINITIONS`` (printed with the tables)
says what the figures mean.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import logging
import math
import platform
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

import httpx

from _offline import blocked, forbid_network

DEFAULT_REQUESTS = 1500
DEFAULT_OUT = Path("bench/results/fuzz_api.json")
BASE_URL = "http://127.0.0.1"
SEEDED_SHARE = 0.75
# negative_data_rejection's finding: a request the schema forbids was served. Reported, not
# failed: pydantic's lax mode takes ``true`` for 1 and "5" for 5, which the schema forbids.
LENIENT = frozenset({"AcceptedNegativeData"})
STREAMS = 12  # seeded streams: one per pass
CHECKPOINT_WAIT_SECONDS = 10.0

DEFINITIONS = """\
requests   HTTP requests the fuzzer sent (seeding requests not counted).
positive   requests generated to fit the schema; negative: generated to break it.
5xx        responses with a status of 500 or more, whatever the check said, but the
           documented 503 (engine_unavailable, offline_mode) of a part left out with
           --no-engine or --models offline, counted apart.
failures   responses that failed a check; each kind (operation | check | status) is shown
           once, with the first request that failed it (as curl) and the answer.
wall       seconds from the first fuzzed request to the last (seeding and start-up apart)."""


# --- the world the app sees ------------------------------------------------------------------

_ARXIV_EMPTY = (
    b'<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom" '
    b'xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">'
    b"<opensearch:totalResults>0</opensearch:totalResults></feed>"
)
_EMPTY_JSON: dict[str, object] = {
    "ncbi": {"esearchresult": {"count": "0", "retmax": "0", "retstart": "0", "idlist": []}},
    "openalex": {"meta": {"count": 0}, "results": []},
    "semanticscholar": {"total": 0, "offset": 0, "data": []},
    "crossref": {"status": "ok", "message": {"total-results": 0, "items": []}},
    "clinicaltrials": {"studies": [], "totalCount": 0},
    "serpapi": {"search_information": {"total_results": 0}, "organic_results": []},
}


def empty_world(request: httpx.Request) -> httpx.Response:
    """Every literature source answers a well-formed 'nothing found'."""
    host = request.url.host
    if "arxiv" in host:
        return httpx.Response(
            200, content=_ARXIV_EMPTY, headers={"content-type": "application/atom+xml"}
        )
    for marker, body in _EMPTY_JSON.items():
        if marker in host:
            return httpx.Response(200, json=body)
    return httpx.Response(404, json={"error": f"no such source host {host}"})


class RecordingNotifier:
    """Delivers nothing: every target 'works'."""

    def __init__(self) -> None:
        self.sent = 0

    async def send(self, notification: Any, targets: Sequence[Any]) -> list[Any]:
        from scholarstream.notify import Delivery

        self.sent += len(targets)
        return [
            Delivery(target_id=t.id, label=t.label, preview=t.preview, ok=True) for t in targets
        ]


# --- seeding ---------------------------------------------------------------------------------

RIS = """\
TY  - JOUR
TI  - Setmelanotide for obesity caused by POMC deficiency
AU  - Clement, Karine
PY  - 2020
JO  - Lancet Diabetes Endocrinol
DO  - 10.1016/S2213-8587(20)30364-8
AB  - Melanocortin 4 receptor agonist setmelanotide reduced weight in POMC deficiency.
ER  -
TY  - JOUR
TI  - Bremelanotide for hypoactive sexual desire disorder
AU  - Kingsberg, Sheryl
PY  - 2019
JO  - Obstet Gynecol
DO  - 10.1097/AOG.0000000000003500
AB  - Two phase 3 trials of the melanocortin agonist bremelanotide in premenopausal women.
ER  -
TY  - JOUR
TI  - Melanocortin receptors in energy homeostasis
AU  - Cone, Roger
PY  - 2006
JO  - Endocr Rev
AB  - A review of melanocortin signalling.
ER  -
"""

STREAM_CONFIG: dict[str, Any] = {
    "purpose": "Track Palatin Technologies' melanocortin programs",
    "business_goals": ["Track competitive landscape"],
    "expected_outcomes": "Go/no-go decisions on our own program",
    "stream_name": "Palatin Pipeline Tracker",
    "stream_type": "competitive",
    "focus_areas": ["Obesity", "Sexual dysfunction"],
    "keywords": ["bremelanotide", "setmelanotide", "melanocortin"],
    "competitors": ["Palatin Technologies"],
    "report_frequency": "weekly",
}


def sse_events(text: str) -> list[dict[str, Any]]:
    events = []
    for block in text.split("\n\n"):
        for line in block.splitlines():
            if line.startswith("data:"):
                events.append(json.loads(line[5:].strip()))
    return events


class Seeder:
    """Creates, through the API, what path ids can point at; ``ids`` by path parameter."""

    def __init__(
        self, client: Any, headers: dict[str, str], stream_ids: list[str], *, engine: bool
    ) -> None:
        self.client = client
        self.engine = engine
        self.stream_ids = stream_ids
        self.headers = headers
        self.ids: dict[str, list[str]] = collections.defaultdict(list)
        self.problems: list[str] = []

    def call(self, method: str, path: str, expect: int, **kwargs: Any) -> Any:
        response = self.client.request(
            method, BASE_URL + path, headers=self.headers, timeout=30, **kwargs
        )
        if response.status_code != expect:
            self.problems.append(f"{method} {path}: {response.status_code} {response.text[:300]}")
            return None
        return response

    def json(self, method: str, path: str, expect: int, **kwargs: Any) -> dict[str, Any]:
        response = self.call(method, path, expect, **kwargs)
        return response.json() if response is not None else {}

    def run(self) -> dict[str, list[str]]:
        """Fresh resources (an earlier pass may have deleted the last ones)."""
        api = "/api/v1"
        self.ids = collections.defaultdict(list)
        self.ids["provider"] += ["openai", "anthropic"]
        self.ids["name"] += ["library", "pubmed", "clinicaltrials"]
        self.ids["action"] += ["run_search"]
        self.call(
            "POST",
            f"{api}/library/imports",
            201,
            files={"file": ("seed.ris", RIS.encode(), "application/x-research-info-systems")},
        )
        page = self.json("GET", f"{api}/library/records", 200)
        self.ids["record_id"] += [item["id"] for item in page.get("items", [])]
        token = self.json("POST", f"{api}/tokens", 201, json={"name": "seeded"})
        self.ids["token_id"] += [token["id"]] if token else []
        column = self.json(
            "POST",
            f"{api}/ai-columns",
            201,
            json={
                "table": "library",
                "name": "Relevant",
                "criteria": "Is it about melanocortin agonists?",
                "output_type": "yes_no",
            },
        )
        self.ids["column_id"] += [column["id"]] if column else []
        self._chat(api)
        self._stream(api)
        draft = self.json(
            "POST", f"{api}/research/draft", 201, json={"prompt": "Melanocortin agonists?"}
        )
        self.ids["research_id"] += [draft["id"]] if draft else []
        if self.engine:
            self._search_run(api)
        target = self.json("POST", f"{api}/me/notifications", 201, json={"url": TARGET_URLS[0]})
        self.ids["target_id"] += [target["id"]] if target else []
        return dict(self.ids)

    def _search_run(self, api: str) -> None:
        """A run waiting at its first checkpoint, whose id decisions can name."""
        run = self.json(
            "POST",
            f"{api}/search/runs",
            202,
            json={"question": "melanocortin agonists for obesity", "sources": ["library"]},
        )
        if not run:
            return
        self.ids["run_id"].append(run["id"])
        deadline = time.monotonic() + CHECKPOINT_WAIT_SECONDS
        while time.monotonic() < deadline:
            response = self.client.get(
                f"{BASE_URL}{api}/search/runs/{run['id']}/checkpoint", headers=self.headers
            )
            if response.status_code == 200:
                self.ids["checkpoint_id"].append(response.json()["id"])
                return
            time.sleep(0.1)
        self.problems.append(f"search run {run['id']} reached no checkpoint")

    def _chat(self, api: str) -> None:
        response = self.call(
            "POST",
            f"{api}/chat/messages",
            200,
            json={"message": "/help", "context": {"current_page": "library"}},
        )
        status = (
            next((e for e in sse_events(response.text) if e.get("type") == "status"), None)
            if response is not None
            else None
        )
        if status is None:
            self.problems.append("chat: no status event")
            return
        conversation = str(status.get("conversation_id"))
        self.ids["conversation_id"].append(conversation)
        self.ids["turn_id"].append(str(status.get("turn_id")))
        objective = self.json(
            "POST",
            f"{api}/chat/conversations/{conversation}/objectives",
            201,
            json={"text": "Find phase 3 trials"},
        )
        if objective:
            self.ids["objective_id"].append(str(objective["id"]))

    def _stream(self, api: str) -> None:
        creation = self.json("POST", f"{api}/streams/creation", 201)
        if creation:
            self.ids["creation_id"].append(creation["id"])
        if not self.stream_ids:
            self.problems.append("no stream left to seed")
            return
        stream_id = self.stream_ids.pop(0)
        self.ids["stream_id"].append(stream_id)
        # Started at once (202), run by the durable engine; 503 without it.
        report = self.json("POST", f"{api}/streams/{stream_id}/runs", 202 if self.engine else 503)
        if "id" in report:
            self.ids["report_id"].append(report["id"])
        target = self.json(
            "POST",
            f"{api}/streams/{stream_id}/notifications",
            201,
            json={"url": TARGET_URLS[1]},
        )
        if target:
            self.ids["target_id"].append(target["id"])


# --- fuzzing ---------------------------------------------------------------------------------


@dataclass
class OperationFigures:
    requests: int = 0
    positive: int = 0
    negative: int = 0
    statuses: collections.Counter[int] = field(default_factory=collections.Counter)
    disabled: int = 0


@dataclass
class Failure:
    operation: str
    check: str
    status: int
    mode: str
    request: str
    message: str


@dataclass
class Figures:
    operations: dict[str, OperationFigures] = field(default_factory=dict)
    failures: dict[str, Failure] = field(default_factory=dict)
    lenient: dict[str, Failure] = field(default_factory=dict)
    failure_counts: collections.Counter[str] = field(default_factory=collections.Counter)
    errors: list[str] = field(default_factory=list)
    wall_seconds: float = 0.0
    passes: int = 0

    @property
    def requests(self) -> int:
        return sum(op.requests for op in self.operations.values())

    @property
    def server_errors(self) -> int:
        """5xx responses but the documented 503s of a part left out (``DISABLED``)."""
        total = sum(
            n for op in self.operations.values() for s, n in op.statuses.items() if s >= 500
        )
        return total - self.disabled

    @property
    def disabled(self) -> int:
        return sum(op.disabled for op in self.operations.values())


class Fuzzer:
    """Passes over every operation (DELETEs last, the deepest paths first, so that the
    others find the seeded resources), each after a fresh seeding, until ``total``
    requests are made."""

    def __init__(self, schema: Any, seeder: Seeder, *, seed: int, sse_timeout: float) -> None:
        from schemathesis.checks import not_a_server_error
        from schemathesis.specs.openapi.checks import (
            content_type_conformance,
            response_schema_conformance,
            status_code_conformance,
        )

        self.seeder = seeder
        self.seed = seed
        self.sse_timeout = sse_timeout
        self.checks = [
            not_a_server_error,
            status_code_conformance,
            content_type_conformance,
            response_schema_conformance,
        ]
        self.operations = sorted(
            (result.ok() for result in schema.get_all_operations()),
            key=lambda op: (op.method.upper() == "DELETE") * (100 - op.path.count("/")),
        )
        self.figures = Figures(operations={op.label: OperationFigures() for op in self.operations})
        self.ids: dict[str, list[str]] = {}

    def run(self, total: int) -> Figures:
        from schemathesis import GenerationMode

        figures = self.figures
        modes = (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
        pending = [(op, mode) for op in self.operations for mode in modes]
        started = time.perf_counter()
        while figures.requests < total and pending:
            self.ids = self.seeder.run()
            per_case = max(1, math.ceil((total - figures.requests) / len(pending)))
            for operation, mode in list(pending):
                made = figures.operations[operation.label].requests
                if not self.operation(operation, mode, per_case) or (
                    figures.operations[operation.label].requests == made
                ):
                    pending.remove((operation, mode))  # nothing (more) to generate
            figures.passes += 1
        figures.wall_seconds = time.perf_counter() - started
        return figures

    def operation(self, operation: Any, mode: Any, max_examples: int) -> bool:
        """Fuzzes one operation in one generation mode; False when hypothesis cannot
        generate anything (a negative case of an operation without parameters)."""
        from hypothesis import HealthCheck, Phase, given, settings
        from hypothesis import seed as hypothesis_seed
        from hypothesis import strategies as st

        streams = "text/event-stream" in json.dumps(operation.definition.raw.get("responses"))
        timeout = self.sse_timeout if streams else 30.0

        @hypothesis_seed(self.seed + self.figures.passes)
        @settings(
            max_examples=max_examples,
            database=None,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            phases=[Phase.explicit, Phase.generate],
        )
        @given(case=operation.as_strategy(generation_mode=mode), data=st.data())
        def run(case: Any, data: Any) -> None:
            self.send(case, data, timeout)

        try:
            run()
        except Exception as exc:
            if type(exc).__name__ != "Unsatisfiable":
                self.figures.errors.append(f"{operation.label} {mode.value}: {exc!r}"[:300])
            return False
        return True

    def send(self, case: Any, data: Any, timeout: float) -> None:
        from schemathesis.core.failures import FailureGroup
        from schemathesis.specs.openapi.checks import negative_data_rejection

        label = case.operation.label
        positive = case.meta is None or case.meta.generation.mode.is_positive
        mode = "positive" if positive else "negative"
        one = self.figures.operations[label]
        one.requests += 1
        if positive:
            one.positive += 1
            _point_at_seeded(case, data, self.ids)
        else:
            one.negative += 1
        headers = self.seeder.headers
        try:
            response = case.call(
                session=self.seeder.client, base_url=BASE_URL, headers=headers, timeout=timeout
            )
        except Exception as exc:  # the app raised: a 500 the client never saw
            one.statuses[500] += 1
            _record(self.figures, label, "exception", 500, mode, case, f"{exc!r}")
            return
        one.statuses[response.status_code] += 1
        checks = self.checks if positive else [*self.checks, negative_data_rejection]
        if _disabled_part(label, response):
            one.disabled += 1
            checks = [check for check in checks if check.__name__ != "not_a_server_error"]
        try:
            case.validate_response(response, checks=checks, headers=headers)
        except FailureGroup as group:
            for failure in group.exceptions:
                detail = f"{failure.title}\n{failure.message}\n{response.text[:500]}"
                _record(
                    self.figures,
                    label,
                    type(failure).__name__,
                    response.status_code,
                    mode,
                    case,
                    detail,
                )


# The 503s a deployment answers when a part of it is left out (--no-engine, --models
# offline): documented, and counted apart from the 5xx that fail the run.
DISABLED: dict[str, frozenset[str]] = {
    "engine_unavailable": frozenset(
        {
            "POST /api/v1/search/runs",
            "POST /api/v1/search/runs/{run_id}/decisions",
            "POST /api/v1/search/runs/{run_id}/cancel",
            "POST /api/v1/research",
            "POST /api/v1/research/{research_id}/confirm",
            "POST /api/v1/research/{research_id}/retry",
            "POST /api/v1/streams/{stream_id}/runs",
        }
    ),
    "offline_mode": frozenset({"POST /api/v1/ai-columns/{column_id}/values"}),
}


def _disabled_part(operation: str, response: Any) -> bool:
    if response.status_code != 503:
        return False
    try:
        code = response.json().get("code")
    except ValueError:
        return False
    return operation in DISABLED.get(code, frozenset())


PAGES = ["home", "library", "search", "streams", "stream", "research", "trials"]
TARGET_URLS = ["json://hooks.example.com/fuzz", "ntfy://fuzz-topic"]
SOURCE_SETS = [["library"], ["library", "pubmed"], ["openalex", "clinicaltrials"]]
# Body fields (top level, or in the chat context) and query parameters whose generated
# values would almost never name something that exists.
_BODY_FIELDS = {
    "researchId": "research_id",
    "research_id": "research_id",
    "checkpoint_id": "checkpoint_id",
}
_KNOWN: dict[str, list[Any]] = {"page": PAGES, "url": TARGET_URLS, "sources": SOURCE_SETS}


def _point_at_seeded(case: Any, data: Any, ids: dict[str, list[str]]) -> None:
    """Three times in four, a path parameter (or a body field, or a query parameter)
    naming a resource gets the id of a seeded one, or a name the app knows."""
    from hypothesis import strategies as st

    def pick(choices: Sequence[Any] | None) -> Any:
        if choices and data.draw(st.floats(0, 1)) < SEEDED_SHARE:
            return data.draw(st.sampled_from(list(choices)))
        return None

    def swap(container: dict[str, Any], key: str, choices: Sequence[Any] | None) -> None:
        if key in container and (value := pick(choices)) is not None:
            container[key] = value

    for name in list(case.path_parameters or {}):
        swap(case.path_parameters, name, ids.get(name))
    swap(case.query or {}, "page", PAGES)
    if isinstance(case.body, dict):
        for field_name, name in _BODY_FIELDS.items():
            swap(case.body, field_name, ids.get(name))
        for field_name in ("url", "sources"):
            swap(case.body, field_name, _KNOWN[field_name])
        context = case.body.get("context")
        if isinstance(context, dict):
            swap(context, "current_page", PAGES)


def _record(
    figures: Figures, operation: str, check: str, status: int, mode: str, case: Any, message: str
) -> None:
    key = f"{operation} | {check} | {status}"
    found = figures.lenient if check in LENIENT else figures.failures
    figures.failure_counts[key] += 1
    if key not in found:
        try:
            request = case.as_curl_command()
        except Exception:
            request = repr(case)
        found[key] = Failure(operation, check, status, mode, request, message[:1500])


# --- the app ---------------------------------------------------------------------------------


@contextlib.contextmanager
def app_under_test(
    args: argparse.Namespace,
) -> Iterator[tuple[Any, Any, dict[str, str], list[str]]]:
    """(schema, client, auth headers, stream ids), the app started (lifespan) in
    schemathesis' ASGI portal."""
    import schemathesis
    from pydantic_ai.models.test import TestModel
    from schemathesis.python import asgi

    from scholarstream.bootstrap import build_engine, create_app
    from scholarstream.db import upgrade
    from scholarstream.runtime import build_runtime
    from scholarstream.settings import load_settings

    with tempfile.TemporaryDirectory(prefix="fuzz-api-") as tmp:
        data_dir = Path(tmp) / "data"
        settings = load_settings(
            data_dir=data_dir,
            sources={"serpapi_api_key": "fuzz-key"},
            # Saving a target in multi-user mode looks its host up in the DNS (the SSRF
            # check); the fuzzer invents host names, and the benchmark stays off the network.
            server={
                "multi_user": args.mode == "multi",
                "allow_private_notification_hosts": True,
            },
        )
        upgrade(settings.app_database_url)
        models = {"default": TestModel()} if args.models == "test" else None
        runtime = build_runtime(
            settings,
            model_overrides=models,
            source_transport=httpx.MockTransport(empty_world),
            notifier=RecordingNotifier(),
        )
        app = create_app(runtime, engine=build_engine(runtime) if args.engine else None)
        token, stream_ids = prepare(settings, multi_user=args.mode == "multi")
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        config = schemathesis.Config.from_dict({"base-url": BASE_URL})
        schema = schemathesis.openapi.from_dict(app.openapi(), config=config)
        schema.app = app
        # schemathesis types an ASGI app with dict scopes, Starlette with MutableMappings.
        client = asgi.get_client(cast("Any", app))
        client.base_url = BASE_URL
        with client:
            try:
                yield schema, client, headers, stream_ids
            finally:
                asgi.shutdown_lifespans()
        if args.engine:
            from dbos import DBOS

            DBOS.destroy(destroy_registry=False)


def prepare(settings: Any, *, multi_user: bool) -> tuple[str | None, list[str]]:
    """Before the app starts: the caller (the local user, or a user with an API token in
    multi-user mode) and streams of theirs, one per pass (the stream guide only makes one
    through a conversation, which ``TestModel`` does not hold). (token or None, stream
    ids)."""
    import asyncio

    from scholarstream.accounts import create_api_token, create_user, ensure_local_user
    from scholarstream.db import OwnerScope
    from scholarstream.runtime import build_runtime
    from scholarstream.streams import StreamStore
    from scholarstream.streams.core import PartialStreamConfig, finish_config

    async def make() -> tuple[str | None, list[str]]:
        runtime = build_runtime(settings, source_transport=httpx.MockTransport(empty_world))
        try:
            token = None
            async with runtime.database.session() as session:
                if multi_user:
                    user = await create_user(session, "fuzzer", "correct horse battery")
                    _, token = await create_api_token(OwnerScope(session, user.id), "fuzz")
                else:
                    user = await ensure_local_user(session)
                owner = user.id
            config = finish_config(PartialStreamConfig(**STREAM_CONFIG))
            store = StreamStore(runtime.database)
            streams = [await store.create(owner, config) for _ in range(STREAMS)]
            return token, [str(stream.id) for stream in streams]
        finally:
            await runtime.close()

    return asyncio.run(make())


# --- output ----------------------------------------------------------------------------------


def print_tables(figures: Figures, args: argparse.Namespace, seeded: dict[str, list[str]]) -> None:
    print(
        f"\nfuzz_api: {figures.requests} requests over {len(figures.operations)} operations "
        f"in {figures.wall_seconds:.1f} s ({figures.passes} passes), mode {args.mode}, "
        f"models {args.models}, engine {'on' if args.engine else 'off'}"
    )
    print(f"seeded ids: {', '.join(f'{k}={len(v)}' for k, v in sorted(seeded.items()))}")
    width = max(len(label) for label in figures.operations)
    print(f"\n{'operation':<{width}}  {'req':>4} {'pos':>4} {'neg':>4}  statuses")
    for label, op in figures.operations.items():
        statuses = " ".join(f"{s}:{n}" for s, n in sorted(op.statuses.items()))
        print(f"{label:<{width}}  {op.requests:>4} {op.positive:>4} {op.negative:>4}  {statuses}")
    overall: collections.Counter[int] = collections.Counter()
    for op in figures.operations.values():
        overall.update(op.statuses)
    print("\nstatus codes: " + ", ".join(f"{s}: {n}" for s, n in sorted(overall.items())))
    print(f"5xx responses: {figures.server_errors}")
    if figures.disabled:
        print(f"503 of a part left out (engine, models): {figures.disabled}")
    for title, found in (
        ("check failures", figures.failures),
        ("accepted invalid requests", figures.lenient),
    ):
        count = sum(figures.failure_counts[key] for key in found)
        print(f"{title}: {count} ({len(found)} distinct)")
        for key, failure in found.items():
            print(f"\n--- {key} (x{figures.failure_counts[key]}, {failure.mode})")
            print(failure.request)
            print(failure.message)
    for error in figures.errors:
        print(f"generation error: {error}")
    if blocked:
        print(f"network attempts refused: {len(blocked)}")
    print("\n" + DEFINITIONS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=DEFAULT_REQUESTS)
    parser.add_argument("--mode", choices=("single", "multi"), default="single")
    parser.add_argument("--models", choices=("test", "offline"), default="test")
    parser.add_argument("--engine", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--sse-timeout", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    forbid_network()
    # The app's own log (unhandled errors included) would bury the tables; a 5xx is counted
    # and its request shown whatever the log says.
    logging.disable(logging.CRITICAL)
    # schemathesis draws from ``random`` inside its strategies; hypothesis warns each time.
    from hypothesis.errors import HypothesisDeprecationWarning

    warnings.filterwarnings("ignore", category=HypothesisDeprecationWarning)
    with app_under_test(args) as (schema, client, headers, stream_ids):
        seeder = Seeder(client, headers, stream_ids, engine=args.engine)
        fuzzer = Fuzzer(schema, seeder, seed=args.seed, sse_timeout=args.sse_timeout)
        figures = fuzzer.run(args.requests)
    for problem in seeder.problems:
        print(f"seeding: {problem}")
    print_tables(figures, args, seeder.ids)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(
        json.dumps(
            {
                "args": {k: str(v) for k, v in vars(args).items()},
                "python": platform.python_version(),
                "requests": figures.requests,
                "wall_seconds": round(figures.wall_seconds, 2),
                "server_errors": figures.server_errors,
                "disabled_part_503": figures.disabled,
                "failures": {k: asdict(v) for k, v in figures.failures.items()},
                "accepted_invalid": {k: asdict(v) for k, v in figures.lenient.items()},
                "failure_counts": dict(figures.failure_counts),
                "operations": {
                    label: {**asdict(op), "statuses": dict(op.statuses)}
                    for label, op in figures.operations.items()
                },
                "seeding_problems": seeder.problems,
            },
            indent=1,
        )
    )
    ok = (
        figures.server_errors == 0
        and not figures.failures
        and not seeder.problems
        and figures.requests >= min(args.requests, 1000)
    )
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
