"""Isolation between users (multi-user mode): user B never reaches user A's resources.

Three users each own one of everything (``isolation_world``): a chat conversation with
its thread and objectives, a chat turn, a stream, an open and a finished stream creation,
a stream report with feedback, a search run waiting at its result review, research in four
statuses (one completed with a shared report), library records, API tokens, a provider
key, notification targets (their own and a stream's), an AI column. A is the victim, B
the other user, C the control.

The tests enumerate the app's routes (API and web pages), so a new route is checked
without being named here:

* every path parameter must be in ``PATH_PARAMETERS`` (whose id fills it), every required
  body in ``BODIES``, every required query parameter in ``QUERIES``, every write without
  ids in its path in ``WRITES_WITHOUT_IDS``: a route this file cannot check fails
  ``test_every_route_is_known``, saying what to add;
* for every route with ids in its path, B sends A's ids (and A's ids beside B's own, such
  as A's report under B's stream), with a valid body, by Bearer token and by session
  cookie, and must get a 404: not a 200, not a 403 that tells the id exists, not a 500,
  and not a 422 (which stops before the lookup and would hide a leak). Afterwards A sees
  all of A's resources exactly as before;
* every GET without ids (the lists, the web pages), every page of B's own resources and
  the probes of ``WRITES_WITHOUT_IDS`` show B nothing of A's;
* the shared report page is public by design (its token is the permission): A's token
  appears in none of B's responses;
* the control: C sends the same requests on C's own ids and gets past validation and the
  lookup, so B's 404s come from the owner scoping and not from a bad request.
"""

from __future__ import annotations

import itertools
import re
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from dbos import DBOS
from fastapi import FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute, iter_route_contexts
from fastapi.testclient import TestClient

from scholarstream.bootstrap import build_engine, create_app
from scholarstream.db import OwnerScope, upgrade
from scholarstream.runtime import Runtime
from scholarstream.sse import EventStreamResponse
from tests.api.isolation_world import (
    HOST,
    PROVIDER,
    Kwargs,
    RecordingNotifier,
    Reply,
    UserWorld,
    build_user_world,
    in_app,
    leaked,
    send,
)
from tests.helpers import make_runtime, new_user
from tests.web.live import clean_settings

Route = tuple[str, str]  # (method, path as the app routes it)

# --- what fills each path parameter -------------------------------------------------------


@dataclass(frozen=True)
class OwnedId:
    """The id of a resource that only its owner may reach; ``ids`` are the owner's."""

    ids: Callable[[UserWorld], list[str]]
    # Numbers counted within their parent (a conversation's objectives 1, 2 ...): the same
    # number under B's own conversation is B's own objective, so they go under A's parent.
    local: bool = False


@dataclass(frozen=True)
class Named:
    """A name from the product's catalogue, nobody's resource: the route acts on the
    caller's own data under that name (what B gets is in ``CALLERS_OWN``)."""

    value: str


@dataclass(frozen=True)
class Capability:
    """An unguessable token that is itself the permission: public by design."""

    why: str


PATH_PARAMETERS: dict[str, OwnedId | Named | Capability] = {
    "conversation_id": OwnedId(lambda w: [w.conversation_id]),
    "objective_id": OwnedId(lambda w: [str(w.objective_ids[0])], local=True),
    "turn_id": OwnedId(lambda w: [w.turn_id]),
    "stream_id": OwnedId(lambda w: [w.stream_id]),
    "creation_id": OwnedId(lambda w: [w.open_creation_id, w.done_creation_id]),
    "report_id": OwnedId(lambda w: [w.report_id]),
    "research_id": OwnedId(lambda w: list(w.research_ids.values())),
    "run_id": OwnedId(lambda w: [w.search_run_id]),
    # A library record, and a screening project's record: each path tries both.
    "record_id": OwnedId(lambda w: [w.record_ids[0], w.screening_record_id]),
    "merge_id": OwnedId(lambda w: [w.merge_id]),
    "collection_id": OwnedId(lambda w: [w.collection_id]),
    "project_id": OwnedId(lambda w: [w.project_id]),
    # A reviewer is a person counted within the project: under A's project only.
    "reviewer_id": OwnedId(lambda w: [str(w.user_id)], local=True),
    "column_id": OwnedId(lambda w: [w.column_id]),
    "token_id": OwnedId(lambda w: [w.api_token_id, w.spare_token_id]),
    # Both targets under either path: a stream's target is no account target, and back.
    "target_id": OwnedId(lambda w: [w.own_target_id, w.stream_target_id]),
    "provider": Named(PROVIDER),
    "name": Named("library"),  # a source, or a model endpoint of the caller's
    "role": Named("default"),  # a model role: the caller's own choice for it
    "action": Named("run_search"),
    "token": Capability("the shared report of a completed research: the link is the permission"),
}

# Routes with names (no ids) in their path: what B gets acting on B's own data. After
# every pass, A's data under the same names is checked untouched (``a_is_intact``).
CALLERS_OWN: dict[Route, int] = {
    ("PUT", "/api/v1/me/provider-keys/{provider}"): 204,  # B's own key for the provider
    ("DELETE", "/api/v1/me/provider-keys/{provider}"): 204,  # B's own key (none: a no-op)
    ("GET", "/api/v1/sources/{name}/search"): 200,  # searches B's own library
    ("POST", "/api/v1/chat/actions/{action}"): 200,  # searches B's own library
    ("GET", "/api/v1/models/endpoints/{name}/models"): 404,  # B has no endpoint of that name
    ("PUT", "/api/v1/models/endpoints/{name}"): 200,  # B's own endpoint of that name
    ("DELETE", "/api/v1/models/endpoints/{name}"): 204,  # B's own endpoint, just made
    ("PUT", "/api/v1/models/roles/{role}"): 200,  # B's own choice for the role
    ("DELETE", "/api/v1/models/roles/{role}"): 204,  # B's own choice
    ("PUT", "/api/v1/models/server-defaults/{role}"): 403,  # B is no administrator
    ("DELETE", "/api/v1/models/server-defaults/{role}"): 403,  # B is no administrator
}

# A valid body for every route with ids in its path that needs one: B's requests must pass
# validation and reach the lookup. ``a`` is the world whose ids the request names.
BODIES: dict[Route, Callable[[UserWorld], Kwargs]] = {
    # A public address (saving an endpoint never connects to it).
    ("PUT", "/api/v1/models/endpoints/{name}"): lambda a: {
        "json": {"base_url": "http://8.8.8.8/v1"}
    },
    ("PUT", "/api/v1/models/roles/{role}"): lambda a: {"json": {"model": f"{PROVIDER}:gpt-b"}},
    ("PUT", "/api/v1/models/server-defaults/{role}"): lambda a: {
        "json": {"model": f"{PROVIDER}:gpt-b"}
    },
    ("PUT", "/api/v1/me/provider-keys/{provider}"): lambda a: {
        "json": {"api_key": f"sk-probe-{uuid.uuid4().hex}"}
    },
    ("POST", "/api/v1/search/runs/{run_id}/decisions"): lambda a: {
        "json": {"checkpoint_id": a.checkpoint_id, "action": "approve"}
    },
    ("PATCH", "/api/v1/ai-columns/{column_id}"): lambda a: {"json": {"name": "Renamed by B"}},
    ("POST", "/api/v1/ai-columns/{column_id}/values"): lambda a: {
        "json": {"items": [{"key": "k1", "title": "A title"}]}
    },
    ("PATCH", "/api/v1/chat/conversations/{conversation_id}"): lambda a: {
        "json": {"title": "Renamed by B"}
    },
    ("POST", "/api/v1/chat/actions/{action}"): lambda a: {
        "json": {
            "params": {"query": "setmelanotide", "sources": ["library"]},
            "context": {"current_page": "library"},
        }
    },
    ("POST", "/api/v1/chat/conversations/{conversation_id}/objectives"): lambda a: {
        "json": {"text": "An objective of B"}
    },
    ("PATCH", "/api/v1/chat/conversations/{conversation_id}/objectives/{objective_id}"): (
        lambda a: {"json": {"text": "Edited by B"}}
    ),
    ("POST", "/api/v1/streams/creation/{creation_id}/turns"): lambda a: {
        "json": {"message": "Track obesity drugs"}
    },
    ("PATCH", "/api/v1/streams/{stream_id}"): lambda a: {"json": {"stream_name": "Renamed by B"}},
    ("PUT", "/api/v1/streams/{stream_id}/reports/{report_id}/feedback"): lambda a: {
        "json": {"key": a.report_item_key, "relevant": False}
    },
    ("PATCH", "/api/v1/research/{research_id}"): lambda a: {"json": {"title": "Renamed by B"}},
    ("POST", "/api/v1/research/{research_id}/confirm"): lambda a: {"json": {"action": "cancel"}},
    ("POST", "/api/v1/research/{research_id}/evidence"): lambda a: {
        "json": {"sources": ["library"], "offline": True}
    },
    ("POST", "/api/v1/research/{research_id}/evidence/remove"): lambda a: {"json": {"keys": [1]}},
    ("POST", "/api/v1/research/{research_id}/evidence/records"): lambda a: {
        "json": {"recordIds": [a.record_ids[0]]}
    },
    ("POST", "/api/v1/streams/{stream_id}/notifications"): lambda a: {
        "json": {"url": "ntfy://probe-of-b"}
    },
    ("PUT", "/api/v1/library/records/{record_id}/note"): lambda a: {"json": {"text": "B's note"}},
    ("PATCH", "/api/v1/library/collections/{collection_id}"): lambda a: {
        "json": {"name": "Renamed by B"}
    },
    ("POST", "/api/v1/library/collections/{collection_id}/records"): lambda a: {
        "json": {"ids": [a.record_ids[1]]}
    },
    ("POST", "/api/v1/library/collections/{collection_id}/records/remove"): lambda a: {
        "json": {"ids": [a.record_ids[0]]}
    },
    ("PATCH", "/api/v1/screening/projects/{project_id}"): lambda a: {
        "json": {"name": "Renamed by B"}
    },
    ("POST", "/api/v1/screening/projects/{project_id}/reviewers"): lambda a: {
        "json": {"username": a.username}
    },
    ("POST", "/api/v1/screening/projects/{project_id}/decisions"): lambda a: {
        "json": {"record_id": a.screening_record_id, "decision": "maybe"}
    },
    ("PUT", "/api/v1/screening/projects/{project_id}/conflicts/{record_id}"): lambda a: {
        "json": {"decision": "include"}
    },
    ("PUT", "/api/v1/screening/projects/{project_id}/fulltext/{record_id}"): lambda a: {
        "json": {"decision": "include"}
    },
    ("PUT", "/api/v1/screening/projects/{project_id}/prisma/entries"): lambda a: {
        "json": {"duplicates_removed": 1}
    },
}

# Routes where no valid body can reach the lookup, so a 422 is the best B can get. Each
# entry needs a comment saying why. None so far: every body above is valid.
UNREACHABLE_WITH_VALID_BODY: frozenset[Route] = frozenset()

# Required query parameters, by route.
QUERIES: dict[Route, dict[str, str]] = {
    ("GET", "/api/v1/sources/{name}/search"): {"q": "setmelanotide"},
    ("GET", "/api/v1/ai-columns"): {"table": "library"},
    ("GET", "/api/v1/chat/config"): {"page": "home"},
}

# A request B makes without ids in the path, and the status B must get.
Probe = tuple[Kwargs, int]
HOME = {"current_page": "home"}

# Writes without ids in their path: probes (their body names A's ids, or they search), or
# why they can only make or change the caller's own data.
WRITES_WITHOUT_IDS: dict[Route, Callable[[UserWorld], list[Probe]] | str] = {
    ("POST", "/api/v1/chat/messages"): lambda a: [
        # A's conversation continued by B.
        ({"json": {"message": "Hi", "context": HOME, "conversation_id": a.conversation_id}}, 404),
        # A page context naming A's stream, report and search run: the answer (offline
        # mode: a search of B's library) shows nothing of them.
        (
            {
                "json": {
                    "message": "setmelanotide",
                    "context": {
                        "current_page": "stream_report",
                        "stream_id": a.stream_id,
                        "report_id": a.report_id,
                        "search_run_id": a.search_run_id,
                    },
                }
            },
            200,
        ),
    ],
    ("POST", "/api/v1/research"): lambda a: [
        ({"json": {"researchId": a.research_ids["draft"]}}, 404),
    ],
    ("POST", "/api/v1/sources/search"): lambda a: [
        ({"json": {"sources": ["library"], "query": {"text": "setmelanotide"}}}, 200),
    ],
    # The evidence for a question about A's records: B's own (empty) library answers.
    ("POST", "/api/v1/evidence"): lambda a: [
        ({"json": {"question": "setmelanotide", "sources": ["library"]}}, 200),
    ],
    # A collection, tags or a merge of A's records: none of them is B's, so B is told, as
    # for ids that exist nowhere, that none is in B's library and nothing is done; a
    # project of them is refused.
    ("POST", "/api/v1/library/collections"): lambda a: [
        ({"json": {"name": f"B's {uuid.uuid4().hex[:8]}", "ids": a.record_ids}}, 404),
    ],
    ("POST", "/api/v1/library/tags"): lambda a: [
        ({"json": {"ids": a.record_ids, "add": ["probe"]}}, 404),
    ],
    ("POST", "/api/v1/library/merges"): lambda a: [
        ({"json": {"kept": a.record_ids[0], "copies": a.record_ids[1:]}}, 404),
    ],
    # A screening project of A's records, A's search run, A's stream report, A's collection.
    ("POST", "/api/v1/screening/projects"): lambda a: [
        (
            {"json": {"name": "B's", "source": {"kind": "library", "record_ids": a.record_ids}}},
            422,
        ),
        (
            {"json": {"name": "B's", "source": {"kind": "search_run", "run_id": a.search_run_id}}},
            404,
        ),
        (
            {
                "json": {
                    "name": "B's",
                    "source": {
                        "kind": "stream_report",
                        "stream_id": a.stream_id,
                        "report_id": a.report_id,
                    },
                }
            },
            404,
        ),
        (
            {
                "json": {
                    "name": "B's",
                    "source": {"kind": "library", "collection_id": a.collection_id},
                }
            },
            404,
        ),
    ],
    ("POST", "/api/v1/auth/login"): "starts a session of whoever knows the password",
    ("POST", "/login"): "the web login form: starts a session of whoever knows the password",
    ("POST", "/api/v1/auth/logout"): "ends the caller's own session",
    ("POST", "/api/v1/tokens"): "makes a token of the caller",
    ("POST", "/api/v1/library/imports"): "imports into the caller's library",
    ("POST", "/api/v1/library/find-duplicates"): "merges copies inside the caller's library",
    ("POST", "/api/v1/search/runs"): "starts a search run of the caller",
    ("POST", "/api/v1/ai-columns"): "makes an AI column of the caller",
    ("POST", "/api/v1/research/draft"): "makes a research draft of the caller",
    ("POST", "/api/v1/me/notifications"): "adds a notification target of the caller",
    ("POST", "/api/v1/streams/creation"): "starts a stream creation of the caller",
    ("POST", "/api/v1/models/check"): "checks a role, a model string or an endpoint of the caller",
}

# GETs left out of A's snapshot, with why: their answer is not A's stored data.
NOT_SNAPSHOT: dict[Route, str] = {
    ("GET", "/api/v1/models/endpoints/{name}/models"): (
        "asks the endpoint's own server for its models (A has none of that name: a 404)"
    ),
}

# For the control (C on C's own ids): the one id that belongs at the path.
CONTROL_IDS: dict[str, Callable[[UserWorld, str], str]] = {
    "record_id": lambda w, path: (
        w.screening_record_id if path.startswith("/api/v1/screening/") else w.record_ids[0]
    ),
    "target_id": lambda w, path: (
        w.stream_target_id if path.startswith("/api/v1/streams/") else w.own_target_id
    ),
    # Its event stream ends (a finished research with no event); the lifecycle routes
    # answer 409 for it, after the lookup, which is what the control is for.
    "research_id": lambda w, path: w.research_ids["completed"],
}

# What the control accepts besides a success: answers given after the lookup.
CONTROL_ANSWERS: dict[Route, tuple[int, str]] = {
    # No model in these tests (offline mode): the values cannot be computed.
    ("POST", "/api/v1/ai-columns/{column_id}/values"): (503, "offline_mode"),
    # C, the owner, is no reviewer of C's own project (owners screen it already).
    ("DELETE", "/api/v1/screening/projects/{project_id}/reviewers/{reviewer_id}"): (
        404,
        "not a reviewer of this project",
    ),
}

# GETs without ids that only administrators may open: B, no administrator, gets a 403.
ADMIN_PAGES: frozenset[Route] = frozenset({("GET", "/admin")})

# Routes that are not API routes (no dependencies, nobody's data): the schema, static files.
OTHER_ROUTES = {"/openapi.json", "/static/swagger", "/static/app"}

ORDER = {"GET": 0, "DELETE": 2}  # reads first, deletes last, the other writes between


# --- the routes ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Endpoint:
    method: str
    path: str
    params: tuple[str, ...]
    required_query: tuple[str, ...]
    requires_body: bool
    streams: bool  # server-sent events: may never end

    @property
    def key(self) -> Route:
        return (self.method, self.path)

    @property
    def known(self) -> bool:
        return all(p in PATH_PARAMETERS for p in self.params)

    @property
    def owned(self) -> list[str]:
        """The parameters that take ids."""
        return [p for p in self.params if isinstance(PATH_PARAMETERS.get(p), OwnedId)]

    @property
    def public(self) -> bool:
        return any(isinstance(PATH_PARAMETERS.get(p), Capability) for p in self.params)

    def __str__(self) -> str:
        return f"{self.method} {self.path}"


def _dependants(dependant: Dependant) -> Iterator[Dependant]:
    yield dependant
    for sub in dependant.dependencies:
        yield from _dependants(sub)


def endpoints(app: FastAPI) -> list[Endpoint]:
    """Every method of every API route and web page, as the app routes it."""
    found: list[Endpoint] = []
    for context in iter_route_contexts(app.routes):
        route, path = context.original_route, context.path
        assert path is not None
        if not isinstance(route, APIRoute):
            assert path in OTHER_ROUTES, f"{path}: a new kind of route; check it for isolation"
            continue
        dependants = list(_dependants(route.dependant))
        response_class = route.response_class
        for method in sorted((route.methods or set()) - {"HEAD", "OPTIONS"}):
            found.append(
                Endpoint(
                    method=method,
                    path=path,
                    params=tuple(re.findall(r"{(\w+)(?::\w+)?}", path)),
                    required_query=tuple(
                        f.alias
                        for d in dependants
                        for f in d.query_params
                        if f.field_info.is_required()
                    ),
                    requires_body=any(
                        f.field_info.is_required() for d in dependants for f in d.body_params
                    ),
                    streams=isinstance(response_class, type)
                    and issubclass(response_class, EventStreamResponse),
                )
            )
    return sorted(found, key=lambda e: (ORDER.get(e.method, 1), e.path))


def fill(path: str, values: dict[str, str]) -> str:
    return re.sub(r"{(\w+)(?::\w+)?}", lambda m: values[m.group(1)], path)


def id_mixes(endpoint: Endpoint, a: UserWorld, b: UserWorld) -> Iterator[dict[str, str]]:
    """Every way of filling the path with ids of A's, alone or beside B's own: each has at
    least one of A's ids, so each must be a 404."""
    top = [p for p in endpoint.owned if not _owned(p).local]
    for owners in itertools.product((a, b), repeat=len(top)):
        if not any(owner is a for owner in owners):
            continue
        whose = dict(zip(top, owners, strict=True))
        choices: list[list[tuple[str, str]]] = []
        for param in endpoint.params:
            kind = PATH_PARAMETERS[param]
            if isinstance(kind, OwnedId):
                choices.append([(param, value) for value in kind.ids(whose.get(param, a))])
            elif isinstance(kind, Named):
                choices.append([(param, kind.value)])
        for chosen in itertools.product(*choices):
            yield dict(chosen)


def _owned(param: str) -> OwnedId:
    kind = PATH_PARAMETERS[param]
    assert isinstance(kind, OwnedId)
    return kind


def own_fill(
    endpoint: Endpoint, owner: UserWorld, *, control: bool = False
) -> Iterator[dict[str, str]]:
    """The path filled with ``owner``'s own ids, every combination (for the control: the
    ids that belong at the path)."""
    choices: list[list[tuple[str, str]]] = []
    for param in endpoint.params:
        kind = PATH_PARAMETERS[param]
        if control and param in CONTROL_IDS:
            choices.append([(param, CONTROL_IDS[param](owner, endpoint.path))])
        elif isinstance(kind, OwnedId):
            choices.append([(param, value) for value in kind.ids(owner)])
        elif isinstance(kind, Named):
            choices.append([(param, kind.value)])
        else:
            choices.append([(param, owner.share_token)])
    for chosen in itertools.product(*choices):
        yield dict(chosen)


def request_kwargs(endpoint: Endpoint, target: UserWorld) -> Kwargs:
    kwargs: Kwargs = {}
    if (body := BODIES.get(endpoint.key)) is not None:
        kwargs.update(body(target))
    if endpoint.key in QUERIES:
        kwargs["params"] = QUERIES[endpoint.key]
    return kwargs


# --- the world ----------------------------------------------------------------------------


@dataclass
class World:
    client: TestClient
    a: UserWorld  # the victim
    b: UserWorld  # the other user
    c: UserWorld  # the control: C's requests on C's own ids must reach them
    notifier: RecordingNotifier
    endpoints: list[Endpoint]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    settings = clean_settings(
        tmp_path_factory.mktemp("isolation"),
        server={"multi_user": True},
        # The chat's offline answers search the library only: nothing waits on sources.
        search={"default_sources": ["library"]},
    )
    upgrade(settings.app_database_url)
    notifier = RecordingNotifier()
    runtime = make_runtime(settings, notifier=notifier)
    # The durable engine runs (the routes that start work check for it first) and works
    # only the stream-runs queue (the streams' runs); it runs the workflows it starts
    # itself (the search runs).
    DBOS.destroy(destroy_registry=False)  # one instance per process: none left over
    app = create_app(runtime, engine=build_engine(runtime, queues=("stream-runs",)))
    with TestClient(app, base_url=HOST, raise_server_exceptions=False) as client:
        a, b, c = (_user_world(client, name) for name in ("alice", "bob", "carol"))
        yield World(client, a, b, c, notifier, endpoints(app))
        # A waiting search run would hold the engine's shutdown for its whole timeout.
        for user in (a, b, c):
            path = f"/api/v1/search/runs/{user.search_run_id}/cancel"
            client.post(path, headers=user.cookie(write=True))
    DBOS.destroy(destroy_registry=False)


def _user_world(client: TestClient, name: str) -> UserWorld:
    async def create(runtime: Runtime) -> uuid.UUID:
        return (await new_user(runtime, name)).id

    return build_user_world(client, name, in_app(client, create))


# --- sending and judging ------------------------------------------------------------------


def by_bearer(user: UserWorld, write: bool) -> dict[str, str]:
    return user.bearer()


def by_cookie(user: UserWorld, write: bool) -> dict[str, str]:
    return user.cookie(write=write)  # a write by cookie comes with our own Origin


CALLERS: dict[str, Callable[[UserWorld, bool], dict[str, str]]] = {
    "bearer": by_bearer,
    "cookie": by_cookie,
}


def snapshot(world: World) -> dict[str, Reply]:
    """What A sees through every GET, on each of A's ids (not the event streams: they
    follow live work and may never end)."""
    a, client = world.a, world.client
    seen: dict[str, Reply] = {}
    for endpoint in world.endpoints:
        if (
            endpoint.method == "GET"
            and endpoint.known
            and not endpoint.streams
            and (endpoint.method, endpoint.path) not in NOT_SNAPSHOT
        ):
            for values in own_fill(endpoint, a):
                url = fill(endpoint.path, values)
                seen[url] = send(client, "GET", url, a.cookie(), request_kwargs(endpoint, a))
    return seen


_REQUEST_ID = re.compile(r'"request_id":"[0-9a-f]+"')


def _same(one: Reply | None, other: Reply) -> bool:
    """The same answer; an error's request id is new on every request."""
    return one is not None and (one.status, _REQUEST_ID.sub("", one.text)) == (
        other.status,
        _REQUEST_ID.sub("", other.text),
    )


def changes(before: dict[str, Reply], after: dict[str, Reply]) -> list[str]:
    return [
        f"A's GET {url} changed: {before[url]} -> {after.get(url)}"
        for url in before
        if not _same(after.get(url), before[url])
    ]


async def _provider_key(runtime: Runtime, owner: uuid.UUID) -> str | None:
    async with runtime.database.session() as session:
        credential = await runtime.credentials.resolve(OwnerScope(session, owner), PROVIDER)
        return credential.api_key


def a_is_intact(world: World) -> list[str]:
    """A's provider key is still A's, and nothing was sent to A's notification targets."""
    a = world.a
    problems: list[str] = []
    key = in_app(world.client, lambda runtime: _provider_key(runtime, a.user_id))
    if key != a.provider_key:
        problems.append(f"A's {PROVIDER} key changed: now {key!r}")
    targets = {uuid.UUID(a.own_target_id), uuid.UUID(a.stream_target_id)}
    if sent := [t for t in world.notifier.sent if t in targets]:
        problems.append(f"notifications were sent to A's targets {sent}")
    return problems


def fail_with(problems: list[str], what: str) -> None:
    if problems:
        pytest.fail(f"{len(problems)} {what}:\n" + "\n".join(f"- {p}" for p in problems))


# --- the tests ----------------------------------------------------------------------------


def test_every_route_is_known(world: World) -> None:
    """A new route, path parameter, required body or query parameter, or write fails here
    until this file says how to check it for isolation; so does a stale table entry."""
    problems: list[str] = []
    for endpoint in world.endpoints:
        for param in endpoint.params:
            if param not in PATH_PARAMETERS:
                problems.append(
                    f"{endpoint}: add path parameter {param!r} to PATH_PARAMETERS: the "
                    "resource whose id it takes (OwnedId), or why it is no id"
                )
        if not endpoint.known:
            continue
        if endpoint.requires_body and endpoint.params and endpoint.key not in BODIES:
            problems.append(f"{endpoint}: add a valid body to BODIES")
        if missing := set(endpoint.required_query) - set(QUERIES.get(endpoint.key, {})):
            problems.append(f"{endpoint}: add query parameters {sorted(missing)} to QUERIES")
        names_only = endpoint.params and not endpoint.owned and not endpoint.public
        if names_only and endpoint.key not in CALLERS_OWN:
            problems.append(f"{endpoint}: add what B gets acting on B's own to CALLERS_OWN")
        write_without_ids = not endpoint.params and endpoint.method != "GET"
        if write_without_ids and endpoint.key not in WRITES_WITHOUT_IDS:
            problems.append(
                f"{endpoint}: add it to WRITES_WITHOUT_IDS: probes naming A's ids in the "
                "body, or why it only makes or changes the caller's own data"
            )
    routes = {endpoint.key for endpoint in world.endpoints}
    tables: dict[str, Any] = {
        "BODIES": BODIES,
        "QUERIES": QUERIES,
        "CALLERS_OWN": CALLERS_OWN,
        "WRITES_WITHOUT_IDS": WRITES_WITHOUT_IDS,
        "CONTROL_ANSWERS": CONTROL_ANSWERS,
        "UNREACHABLE_WITH_VALID_BODY": UNREACHABLE_WITH_VALID_BODY,
    }
    for name, table in tables.items():
        problems += [
            f"{name} names {m} {p}: no such route" for m, p in table if (m, p) not in routes
        ]
    fail_with(problems, "routes this file cannot check")


@pytest.mark.parametrize("how", sorted(CALLERS))
def test_b_gets_404_for_every_id_of_a(world: World, how: str) -> None:
    a, b, client = world.a, world.b, world.client
    caller = CALLERS[how]
    before = snapshot(world)
    problems: list[str] = []
    sent = 0
    for endpoint in world.endpoints:
        # Lists: test_b_sees_none_of_a. Public pages: test_the_share_token_of_a_never...
        if not endpoint.params or not endpoint.known or endpoint.public:
            continue
        if endpoint.owned:
            fills, expected = list(id_mixes(endpoint, a, b)), 404
        else:
            fills, expected = list(own_fill(endpoint, b)), CALLERS_OWN[endpoint.key]
        for values in fills:
            url = fill(endpoint.path, values)
            kwargs = request_kwargs(endpoint, a)
            reply = send(client, endpoint.method, url, caller(b, endpoint.method != "GET"), kwargs)
            sent += 1
            where = f"{endpoint.method} {url} ({endpoint.path}): B got {reply}"
            excused = reply.status == 422 and endpoint.key in UNREACHABLE_WITH_VALID_BODY
            if reply.status != expected and not excused:
                problems.append(f"{where}, not {expected}")
            if shown := leaked(reply, a, url + repr(kwargs)):
                problems.append(f"{where}; it shows A's {shown}")
    assert sent > 90, f"the routes were not enumerated (only {sent} requests)"
    problems += changes(before, snapshot(world))
    problems += a_is_intact(world)
    fail_with(problems, f"isolation failures (B by {how})")


@pytest.mark.parametrize("how", sorted(CALLERS))
def test_b_sees_none_of_a(world: World, how: str) -> None:
    """B's lists, pages and searches, B's views of B's own resources, and the probes of
    WRITES_WITHOUT_IDS show nothing of A's."""
    a, b, client = world.a, world.b, world.client
    caller = CALLERS[how]
    before = snapshot(world)
    problems: list[str] = []
    for endpoint in world.endpoints:
        if not endpoint.known:
            continue
        if endpoint.method == "GET":
            if endpoint.streams:
                continue  # B's own live work; A's ids in them are the test above
            for values in own_fill(endpoint, b):
                url = fill(endpoint.path, values)
                reply = send(client, "GET", url, caller(b, False), request_kwargs(endpoint, b))
                where = f"GET {url} ({endpoint.path}): B got {reply}"
                refused = reply.status == 403 and endpoint.key in ADMIN_PAGES
                if reply.status >= 500 or (
                    not endpoint.params and reply.status >= 400 and not refused
                ):
                    problems.append(where)
                if shown := leaked(reply, a, url):
                    problems.append(f"{where}; it shows A's {shown}")
            continue
        probes = WRITES_WITHOUT_IDS.get(endpoint.key)
        if endpoint.params or probes is None or isinstance(probes, str):
            continue
        for kwargs, expected in probes(a):
            headers = caller(b, True)
            reply = send(client, endpoint.method, endpoint.path, headers, kwargs, read_events=True)
            where = f"{endpoint} with {kwargs}: B got {reply}"
            if reply.status != expected:
                problems.append(f"{where}, not {expected}")
            if shown := leaked(reply, a, repr(kwargs)):
                problems.append(f"{where}; it shows A's {shown}")
    problems += changes(before, snapshot(world))
    problems += a_is_intact(world)
    fail_with(problems, f"isolation failures (B by {how})")


def test_a_sees_what_b_must_not(world: World) -> None:
    """The leak checks look for what A's own responses show (so B would see it through a
    route that forgot its owner); the secrets nobody is shown are shown to A neither."""
    never_shown = {"api token", "provider key"}
    seen = "\n".join(reply.text for reply in snapshot(world).values()).lower()
    secrets = world.a.secrets()
    missing = [n for n, s in secrets.items() if n not in never_shown and s.lower() not in seen]
    assert not missing, f"A's own GETs never show A's {missing}"
    shown = [n for n in never_shown if secrets[n].lower() in seen]
    assert not shown, f"A's own GETs show A's {shown}"


def test_the_share_token_of_a_never_reaches_b(world: World) -> None:
    """The shared report is public (no login); its token, the only way to it, is shown to
    A and to nobody else."""
    a, b, client = world.a, world.b, world.client
    page = send(client, "GET", f"/shared/research/{a.share_token}", {})
    assert page.status == 200 and a.marker in page.text, page
    mine = send(client, "GET", f"/api/v1/research/{a.research_ids['completed']}", a.cookie())
    assert a.share_token in mine.text, "A's own research shows A the share link"
    problems: list[str] = []
    for endpoint in world.endpoints:
        if endpoint.method != "GET" or not endpoint.known or endpoint.public:
            continue
        fills = [] if endpoint.streams else list(own_fill(endpoint, b))
        fills += list(id_mixes(endpoint, a, b)) if endpoint.owned else []
        for values in fills:
            url = fill(endpoint.path, values)
            for headers in (b.bearer(), b.cookie()):
                reply = send(client, "GET", url, headers, request_kwargs(endpoint, b))
                if a.share_token in reply.text:
                    problems.append(f"GET {url} shows B the share token of A's report")
    fail_with(problems, "leaks of A's share token")


def test_the_same_requests_reach_the_owners_own_resources(world: World) -> None:
    """The control of the 404s: C sends B's requests on C's own ids and gets past the
    validation and the lookup (no 404, no 422), so B's 404s come from the owner scoping.
    Last in the file: it deletes C's resources (a child before its parent)."""
    c, client = world.c, world.client
    problems: list[str] = []
    reached = 0
    owned = [e for e in world.endpoints if e.known and e.owned]
    owned.sort(key=lambda e: (ORDER.get(e.method, 1), -len(e.path) if e.method == "DELETE" else 0))
    for endpoint in owned:
        for values in own_fill(endpoint, c, control=True):
            url = fill(endpoint.path, values)
            reply = send(
                client, endpoint.method, url, c.cookie(write=True), request_kwargs(endpoint, c)
            )
            reached += 1
            answer = CONTROL_ANSWERS.get(endpoint.key)
            if answer and reply.status == answer[0] and answer[1] in reply.text:
                continue
            if reply.status in (401, 403, 404, 422) or reply.status >= 500:
                problems.append(f"{endpoint.method} {url} ({endpoint.path}): C got {reply}")
    assert reached > 50, f"the routes were not enumerated (only {reached} requests)"
    fail_with(problems, "requests that do not reach their owner's own resource")
