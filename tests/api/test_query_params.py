"""Query parameters a route does not declare are refused (422, in the one error body, naming
what the endpoint accepts), never ignored; every declared one is still taken; and the web
UI sends no parameter its endpoint does not declare (read from the JavaScript modules and
the templates, so a page cannot drift from the API unnoticed)."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from scholarstream.web import STATIC_DIR
from tests.api.conftest import ClientFactory
from tests.api.test_api_library import EXPORTS, upload
from tests.api.web_calls import HOLE, ApiCall, web_calls
from tests.helpers import LIBRARY_WORDING

TEMPLATES_DIR = STATIC_DIR.parent / "templates"
RECORDS_ACCEPTS = (
    "q, year_from, year_to, publication_type, related, offset, limit, collection, tag, has_note"
)
Operations = dict[str, dict[str, list[str]]]
"""OpenAPI path -> method -> the query parameters it documents."""


def is_refusal(response: Any) -> bool:
    if response.status_code != 422:
        return False
    return str(response.json()["message"]).startswith("Unknown query parameter")


# --- a misspelt or unknown parameter --------------------------------------------------------


def test_a_misspelt_parameter_is_refused_naming_what_the_endpoint_accepts(
    client: TestClient,
) -> None:
    upload(client, "scopus.ris", (EXPORTS / "scopus.ris").read_bytes())
    response = client.get("/api/v1/library/records?q=taurine&limt=5")
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["code"] == "validation_error"
    assert body["message"] == (
        f"Unknown query parameter 'limt'. This endpoint accepts: {RECORDS_ACCEPTS}."
    )
    assert body["hint"].startswith("Did you mean 'limit'?")
    assert body["fields"] == [
        {"field": "query.limt", "message": "limt is not a parameter of this endpoint"}
    ]
    assert body["request_id"] == response.headers["x-request-id"]
    assert not any(word in response.text for word in LIBRARY_WORDING)

    # Spelt right, the same search is served.
    found = client.get("/api/v1/library/records?q=taurine&limit=5")
    assert found.status_code == 200 and found.json()["limit"] == 5


def test_several_unknown_parameters_and_an_endpoint_that_takes_none(
    client: TestClient,
) -> None:
    several = client.get("/api/v1/library/facets", params={"limit": 5, "offset": 20, "q": "x"})
    assert several.status_code == 422
    assert several.json()["message"] == (
        "Unknown query parameters 'limit' and 'offset'. This endpoint accepts: q, year_from, "
        "year_to, publication_type, related, collection, tag, has_note."
    )
    assert [f["field"] for f in several.json()["fields"]] == ["query.limit", "query.offset"]

    none = client.get("/api/v1/me", params={"verbose": "true"})
    assert none.status_code == 422
    assert none.json()["message"] == (
        "Unknown query parameter 'verbose'. This endpoint takes no query parameters."
    )


def test_a_refused_request_changes_nothing(client: TestClient) -> None:
    upload(client, "scopus.ris", (EXPORTS / "scopus.ris").read_bytes())
    upload(client, "scopus.ris", (EXPORTS / "scopus.ris").read_bytes())
    before = client.get("/api/v1/library/merges").json()
    refused = client.post(
        "/api/v1/library/find-duplicates?dryrun=true", headers={"Origin": "http://127.0.0.1"}
    )
    assert refused.status_code == 422
    assert "Did you mean 'dry_run'?" in refused.json()["hint"]
    assert client.get("/api/v1/library/merges").json() == before


def test_the_check_comes_before_the_login_check(make_client: ClientFactory) -> None:
    """Like any other invalid request: a caller sees what is wrong with the request itself
    (the parameters are public in /docs), then logs in."""
    client = make_client(server={"multi_user": True})
    assert client.get("/api/v1/library/records").status_code == 401
    assert is_refusal(client.get("/api/v1/library/records?limt=5"))


# --- every declared parameter is taken ------------------------------------------------------


@pytest.fixture
def operations(client: TestClient) -> Operations:
    document = client.get("/openapi.json").json()
    found: Operations = {}
    for path, methods in document["paths"].items():
        if not path.startswith("/api/v1/"):
            continue
        for method, operation in methods.items():
            names = [p["name"] for p in operation.get("parameters", []) if p["in"] == "query"]
            found.setdefault(path, {})[method] = names
    return found


def _value(schema: Mapping[str, Any]) -> str:
    """A value of the parameter's type, so that most requests go through."""
    for option in schema.get("anyOf", []):
        if option.get("type") != "null":
            return _value(option)
    if "enum" in schema:
        return str(schema["enum"][0])
    if schema.get("type") == "array":
        return _value(schema.get("items", {}))
    kind = schema.get("type")
    if kind == "boolean":
        return "true"
    if kind == "integer":
        return str(max(int(schema.get("minimum", 1)), 1))
    if schema.get("format") == "uuid":
        return str(uuid.uuid4())
    if schema.get("format") == "date":
        return "2024-01-31"
    return "a"


def test_every_parameter_in_the_docs_is_accepted_and_nothing_else(
    client: TestClient, operations: Operations
) -> None:
    """For every operation of /docs: an unknown parameter is refused (none takes free-form
    parameters), naming exactly the parameters of /docs, in their order; and all of those
    at once are not refused."""
    document = client.get("/openapi.json").json()
    with_parameters = 0
    for path, methods in operations.items():
        for method, names in methods.items():
            parameters = document["paths"][path][method].get("parameters", [])
            query: list[tuple[str, str]] = [
                (str(p["name"]), _value(p["schema"])) for p in parameters if p["in"] == "query"
            ]
            url = path.replace("{", "").replace("}", "")  # any text where an id goes
            url = "/".join(str(uuid.uuid4()) if "_id" in s else s for s in url.split("/"))
            headers = {"Origin": "http://127.0.0.1"}
            operation = f"{method.upper()} {path}"
            # Refused before anything is done, so any operation may be sent this.
            refused = client.request(
                method, url, params=[*query, ("zz_not_declared", "1")], headers=headers
            )
            assert is_refusal(refused), f"{operation}: {refused.text}"
            accepts = refused.json()["message"].partition("'zz_not_declared'. ")[2]
            if names:
                assert accepts == f"This endpoint accepts: {', '.join(names)}.", operation
            else:
                assert accepts == "This endpoint takes no query parameters.", operation
                continue
            answer = client.request(method, url, params=tuple(query), headers=headers)
            assert not is_refusal(answer), f"{operation}: {answer.text}"
            with_parameters += 1
    assert with_parameters >= 15  # the reading of /docs found the operations with parameters


def test_declared_parameters_take_effect(client: TestClient) -> None:
    upload(client, "wos.ris", (EXPORTS / "wos_test.ris").read_bytes())
    page = client.get("/api/v1/library/records", params={"offset": 2, "limit": 3}).json()
    assert (page["offset"], page["limit"], len(page["items"])) == (2, 3, 3)
    every = client.get("/api/v1/library/records", params={"limit": 5}).json()["items"]
    assert [item["id"] for item in every[2:5]] == [item["id"] for item in page["items"]]

    facets = client.get(
        "/api/v1/library/facets",
        params={"q": "taurine", "related": "false", "tag": "", "publication_type": ""},
    )
    assert facets.status_code == 200, facets.text
    assert client.get("/api/v1/library/merges", params={"limit": 5}).status_code == 200
    assert client.get("/api/v1/search/runs", params={"limit": 20}).status_code == 200
    assert client.get("/api/v1/ai-columns", params={"table": "library"}).status_code == 200
    config = client.get("/api/v1/chat/config", params={"page": "search", "tab": "results"})
    assert config.status_code == 200, config.text
    assert client.get("/api/v1/streams/creation", params={"status": "all"}).status_code == 200


# --- what the web UI sends ------------------------------------------------------------------


def _route(operations: Operations, path: str) -> str | None:
    """The documented path ``path`` (HOLE for a computed segment) is served by: the one whose
    fixed segments match the most of ``path``'s."""
    segments = path.rstrip("/").split("/")
    best: tuple[int, str] | None = None
    for documented in operations:
        parts = documented.split("/")
        if len(parts) != len(segments):
            continue
        score = 0
        for have, want in zip(segments, parts, strict=True):
            if want.startswith("{") or have == HOLE:
                continue
            if have != want:
                break
            score += 1
        else:
            if best is None or score > best[0]:
                best = (score, documented)
    return best[1] if best else None


def mismatches(calls: Iterable[ApiCall], operations: Operations) -> list[str]:
    """What the UI sends that its endpoint would refuse, or that cannot be read."""
    found = []
    for call in calls:
        if call.problem:
            found.append(f"{call.where}: {call.problem}")
            continue
        route = _route(operations, call.path)
        if route is None:
            shown = call.path.replace(HOLE, "{…}")
            found.append(f"{call.where}: no endpoint of the API serves {shown}")
            continue
        accepted = {name for names in operations[route].values() for name in names}
        for name in call.params:
            if name not in accepted:
                found.append(
                    f"{call.where}: sends '{name}' to {route}, which accepts "
                    f"{', '.join(sorted(accepted)) or 'no query parameters'}"
                )
    return found


def test_the_web_ui_sends_only_declared_parameters(operations: Operations) -> None:
    calls = web_calls(STATIC_DIR, TEMPLATES_DIR)
    with_query = [call for call in calls if call.params]
    # The reader found the pages' queries (it would find none if it broke).
    assert len(with_query) >= 20
    assert {"/api/v1/library/facets", "/api/v1/sources/\x00/search"} <= {c.path for c in calls}
    assert mismatches(calls, operations) == []


OLD_LIBRARY_JS = """
const FILTERS = ["q", "year_from", "tag"];
const DEFAULT_LIMIT = 20;

function toParams(state, { withRecord = true } = {}) {
  const params = new URLSearchParams();
  for (const name of FILTERS) {
    const value = String(state[name] ?? "").trim();
    if (value) params.set(name, value); // a comment with a quote: "
  }
  if (state.offset) params.set("offset", String(state.offset));
  if (state.limit && state.limit !== DEFAULT_LIMIT) params.set("limit", String(state.limit));
  if (withRecord && state.record) params.set("record", state.record);
  return params;
}

async function showFacets(state) {
  const params = toParams(state, { withRecord: false });
  const split = /["`]/g;
  return api(`/api/v1/library/facets?${params}`);
}

async function wrong(base, text) {
  await api(`/api/v1/library/records?q=${encodeURIComponent(text)}&limt=10`);
  await api(`${base}?limit=5`);
  await api(`/api/v1/library/records?${text}`);
}
"""


def test_the_check_of_the_web_ui_finds_what_a_page_would_get_refused(
    tmp_path: Path, operations: Operations
) -> None:
    """The library page of before this check sent its page size to the facets endpoint: the
    reader finds it, a misspelt name, and the queries it cannot read."""
    static, templates = tmp_path / "static", tmp_path / "templates"
    (static / "library").mkdir(parents=True)
    templates.mkdir()
    (static / "library" / "library.js").write_text(OLD_LIBRARY_JS, encoding="utf-8")
    (templates / "page.html").write_text(
        '{% set api = "/api/v1/screening/projects/" ~ pid %}\n'
        '<img src="{{ api }}/prisma/diagram?format=svg&amp;t={{ now }}">\n',
        encoding="utf-8",
    )
    found = mismatches(web_calls(static, templates), operations)
    facets = "to /api/v1/library/facets, which accepts"
    assert [line.split(":", 2)[:2] for line in found] == [
        ["library/library.js", "20"],
        ["library/library.js", "20"],
        ["library/library.js", "20"],
        ["library/library.js", "24"],
        ["library/library.js", "25"],
        ["library/library.js", "26"],
        ["templates/page.html", "2"],
    ], found
    assert f"sends 'offset' {facets}" in found[0]
    assert f"sends 'limit' {facets}" in found[1]
    assert f"sends 'record' {facets}" in found[2]
    assert "sends 'limt' to /api/v1/library/records" in found[3]
    assert "cannot tell which endpoint" in found[4]
    assert "cannot find how text is made" in found[5]
    assert "sends 't' to /api/v1/screening/projects/{project_id}/prisma/diagram" in found[6]
