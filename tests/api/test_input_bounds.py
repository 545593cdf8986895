"""Inputs bounded to what exists: an AI column belongs to one of the real results tables
(an enum in the OpenAPI schema; any other name is a 422 in plain words), and a research
draft selects at most ``research.max_selected_llms`` models (a server key on a router such
as OpenRouter accepts any model name, so the fan-out is capped)."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from tests.api.conftest import ClientFactory

AI_COLUMNS = "/api/v1/ai-columns"
DRAFT = "/api/v1/research/draft"
SPEC = {"name": "RCT", "criteria": "Is it a randomised controlled trial?", "output_type": "yes_no"}


def _models(count: int) -> list[str]:
    return [f"openrouter:vendor/model-{number}" for number in range(count)]


def _draft(models: list[str]) -> dict[str, Any]:
    return {
        "prompt": "GLP-1 agonists and weight",
        "selectedLlms": models,
        "synthesisLlm": models[0],
    }


def _plain_422(response: Any, *words: str) -> dict[str, Any]:
    assert response.status_code == 422, response.text[:300]
    body: dict[str, Any] = response.json()
    text = f"{body['message']} {body.get('hint') or ''}"
    for word in words:
        assert word in text, text
    for internal in ("Input should", "pydantic", "enum", "ResultsTable", "Traceback"):
        assert internal not in text, text
    return body


def test_ai_columns_belong_to_a_real_results_table(client: TestClient) -> None:
    for table in ("users", "research_results", "", "Library"):
        refused = client.post(AI_COLUMNS, json={"table": table, **SPEC})
        _plain_422(refused, "library, search, trials")
        listed = client.get(AI_COLUMNS, params={"table": table})
        _plain_422(listed, "library, search, trials")
    _plain_422(client.post(AI_COLUMNS, json={"table": ["library"], **SPEC}), "library")

    # The schema shows the allowed tables, for the body and for the listing's query.
    schema = client.get("/openapi.json").json()
    create = schema["paths"][AI_COLUMNS]["post"]["requestBody"]["content"]["application/json"]
    body_schema = schema["components"]["schemas"][create["schema"]["$ref"].rsplit("/", 1)[1]]
    table_ref = body_schema["properties"]["table"]["$ref"].rsplit("/", 1)[1]
    assert schema["components"]["schemas"][table_ref]["enum"] == ["library", "search", "trials"]
    (listing,) = schema["paths"][AI_COLUMNS]["get"]["parameters"]
    assert listing["name"] == "table" and listing["schema"]["$ref"].endswith(table_ref)

    for table in ("library", "search", "trials"):
        created = client.post(AI_COLUMNS, json={"table": table, **SPEC})
        assert created.status_code == 201, created.text[:300]
        assert created.json()["table"] == table
        listed = client.get(AI_COLUMNS, params={"table": table}).json()["columns"]
        assert [column["name"] for column in listed] == ["RCT"]


def test_a_research_draft_selects_at_most_the_configured_number_of_models(
    make_client: ClientFactory,
) -> None:
    client = make_client(research={"title_role": None})
    refused = client.post(DRAFT, json=_draft(_models(500)))
    body = _plain_422(refused, "500 models", "at most 8")
    assert body["code"] == "invalid_input"
    assert client.get("/api/v1/research").json()["research"] == []  # nothing stored
    _plain_422(client.post(DRAFT, json=_draft(_models(9))), "9 models", "at most 8")

    # The limit counts distinct models (a model selected twice is asked once).
    at_limit = client.post(DRAFT, json=_draft(_models(8) + _models(8)))
    assert at_limit.status_code == 201, at_limit.text[:300]
    research = at_limit.json()
    assert research["selectedLlms"] == _models(8)

    # Editing the draft is held to the same limit, and a refused edit changes nothing.
    path = f"/api/v1/research/{research['id']}"
    _plain_422(client.patch(path, json={"selectedLlms": _models(50)}), "50 models", "at most 8")
    assert client.get(path).json()["selectedLlms"] == _models(8)
    edited = client.patch(path, json={"selectedLlms": _models(3)})
    assert edited.status_code == 200, edited.text[:300]
    assert edited.json()["selectedLlms"] == _models(3)


def test_the_model_limit_is_the_servers_setting(make_client: ClientFactory) -> None:
    client = make_client(research={"title_role": None, "max_selected_llms": 2})
    _plain_422(client.post(DRAFT, json=_draft(_models(3))), "3 models", "at most 2")
    assert client.post(DRAFT, json=_draft(_models(2))).status_code == 201
