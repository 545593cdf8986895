"""The built-in payload types: each schema takes a realistic payload and refuses a broken
one, the LLM payloads' instructions show a line their own parser and schema accept, and
``make_json_parser`` copes with what models really write."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from pydantic import JsonValue

import scholarstream.chat  # noqa: F401  (registers the built-ins)
from scholarstream.chat import BUILTIN_PAYLOAD_TYPES
from scholarstream.chat.core import PayloadError, get_payload_type, make_json_parser
from scholarstream.sources import TRIAL_PHASES, TRIAL_STATUSES

PAPER: dict[str, Any] = {
    "kind": "paper",
    "ids": {
        "doi": "10.1056/nejmoa1907702",
        "pmid": "31535829",
        "pmcid": None,
        "arxiv_id": None,
        "openalex_id": "W2974063428",
        "s2_id": None,
    },
    "title": "Dapagliflozin in Patients with Heart Failure and Reduced Ejection Fraction",
    "authors": ["McMurray, John J V", "Solomon, Scott D"],
    "journal": "The New England journal of medicine",
    "year": 2019,
    "published": "2019-11-21",
    "volume": "381",
    "issue": "21",
    "pages": "1995-2008",
    "publisher": None,
    "abstract": "In patients with heart failure and a reduced ejection fraction ...",
    "publication_types": ["Journal Article", "Randomized Controlled Trial"],
    "mesh_terms": ["Heart Failure", "Stroke Volume"],
    "keywords": [],
    "citation_count": 3100,
    "retraction": None,
    "url": "https://pubmed.ncbi.nlm.nih.gov/31535829/",
    "links": [{"url": "https://doi.org/10.1056/nejmoa1907702", "kind": "doi"}],
    "sources": ["pubmed"],
}
TRIAL: dict[str, Any] = {
    "kind": "trial",
    "nct_id": "NCT03036124",
    "title": "Study to Evaluate the Effect of Dapagliflozin on the Incidence of Worsening Heart "
    "Failure or Cardiovascular Death",
    "official_title": None,
    "summary": "The purpose of this study is to evaluate ...",
    "status": "COMPLETED",
    "phases": ["PHASE3"],
    "study_type": "INTERVENTIONAL",
    "conditions": ["Heart Failure"],
    "interventions": ["Dapagliflozin", "Placebo"],
    "sponsor": "AstraZeneca",
    "collaborators": [],
    "enrollment": 4744,
    "start_date": "2017-02-08",
    "primary_completion_date": "2019-07-17",
    "completion_date": "2019-09-27",
    "primary_outcomes": [{"measure": "Time to first occurrence of CV death", "time_frame": None}],
    "has_results": True,
    "url": "https://clinicaltrials.gov/study/NCT03036124",
    "sources": ["clinicaltrials"],
}
ROW = {"value": "Phase 3", "count": 18, "percent": 51.4}

EXAMPLES: dict[str, dict[str, Any]] = {
    "pubmed_search_results": {
        "query": "dapagliflozin AND heart failure[mh]",
        "total": 1834,
        "articles": [
            {
                "pmid": "31535829",
                "doi": "10.1056/nejmoa1907702",
                "title": PAPER["title"],
                "authors": PAPER["authors"],
                "journal": PAPER["journal"],
                "year": 2019,
                "abstract_snippet": "In patients with heart failure …",
                "url": PAPER["url"],
            }
        ],
    },
    "literature_search_results": {
        "query": "dapagliflozin heart failure",
        "sources": [
            {
                "source": "pubmed",
                "ok": True,
                "total": 1834,
                "returned": 5,
                "error_code": None,
                "error": None,
                "hint": None,
            },
            {
                "source": "semantic_scholar",
                "ok": False,
                "total": None,
                "returned": 0,
                "error_code": "source_unavailable",
                "error": "Semantic Scholar is rate-limiting us (HTTP 429).",
                "hint": "Try again in a few minutes.",
            },
        ],
        "total_found": 5,
        "articles": [
            {
                "id": "doi:10.1056/nejmoa1907702",
                "title": PAPER["title"],
                "authors": PAPER["authors"],
                "journal": PAPER["journal"],
                "year": 2019,
                "doi": "10.1056/nejmoa1907702",
                "pmid": "31535829",
                "arxiv_id": None,
                "library_id": None,
                "abstract_snippet": None,
                "url": PAPER["url"],
                "sources": ["pubmed", "openalex"],
            }
        ],
    },
    "article_details": {
        "identifier": "PMID: 31535829",
        "source": "pubmed",
        "library_id": None,
        "article": PAPER,
    },
    "trial_search_results": {
        "query": {
            "terms": None,
            "condition": "heart failure",
            "intervention": "dapagliflozin",
            "sponsor": None,
            "phases": ["PHASE3"],
            "statuses": [],
            "start_from": None,
            "start_to": None,
        },
        "total": 12,
        "next_page_token": "NF0g5JGBlPMuwQY",
        "trials": [
            {
                "nct_id": "NCT03036124",
                "title": TRIAL["title"],
                "status": "COMPLETED",
                "phases": ["PHASE3"],
                "study_type": "INTERVENTIONAL",
                "conditions": ["Heart Failure"],
                "interventions": ["Dapagliflozin"],
                "sponsor": "AstraZeneca",
                "enrollment": 4744,
                "start_date": "2017-02-08",
                "summary_snippet": None,
                "url": TRIAL["url"],
            }
        ],
    },
    "retrieved_items": {
        "items": [
            {"id": "NCT03036124", "kind": "trial", "record": TRIAL, "annotations": {}},
            {
                "id": "doi:10.1056/nejmoa1907702",
                "kind": "search_result",
                "record": PAPER,
                "annotations": {"score": "0.92", "label": "relevant"},
            },
        ],
        "not_found": [{"id": "NCT99999999", "reason": "not found in clinicaltrials"}],
    },
    "analysis_result": {
        "operation": "distribution",
        "field": "phase",
        "filter": None,
        "group_by": None,
        "total": 35,
        "matched": None,
        "missing": 0,
        "rows": [ROW, {"value": "Phase 2", "count": 12, "percent": 34.3}],
        "groups": [],
        "stats": None,
    },
    "query_suggestion": {
        "query": '(EGFR[MeSH] OR "epidermal growth factor receptor") AND (resistance OR '
        'resistant) AND (lung neoplasms[MeSH] OR "lung cancer")',
        "target": "pubmed",
        "explanation": "EGFR as MeSH heading and phrase, both spellings of resistance.",
    },
    "ai_column_suggestion": {
        "name": "Design",
        "criteria": "Which study design does this paper report?",
        "output_type": "category",
        "categories": ["RCT", "cohort", "case-control", "other"],
        "explanation": "Lets you keep only the randomised trials.",
    },
    "filter_suggestion": {
        "filters": {"year_from": 2020, "publication_type": "Review"},
        "explanation": "Recent reviews only.",
    },
    "trial_search_suggestion": {
        "condition": "non-small cell lung cancer",
        "intervention": "osimertinib",
        "phases": ["PHASE3"],
        "statuses": ["RECRUITING", "NOT_YET_RECRUITING"],
        "start_from": "2020-01-01",
        "explanation": "Phase 3 osimertinib trials that are or will soon be recruiting.",
    },
}


Edit = tuple[tuple[str | int, ...], Any, bool]


def change(path: tuple[str | int, ...], value: Any = None, *, delete: bool = False) -> Edit:
    return path, value, delete


def broken(name: str) -> list[Any]:
    """Ways each payload can be wrong that its schema must catch."""

    def apply(edit: Edit | dict[str, Any]) -> Any:
        if isinstance(edit, dict):
            return edit
        path, value, delete = edit
        copied = copy.deepcopy(EXAMPLES[name])
        node: Any = copied
        for key in path[:-1]:
            node = node[key]
        if delete:
            del node[path[-1]]
        else:
            node[path[-1]] = value
        return copied

    cases: dict[str, list[Any]] = {
        "pubmed_search_results": [
            change(("articles", 0, "pmid"), "PMC123"),
            change(("articles", 0, "title"), None, delete=True),
            change(("total",), -1),
        ],
        "literature_search_results": [
            change(("sources", 1, "error"), None),  # failed, but does not say why
            change(("articles", 0, "sources"), []),
            change(("sources",), []),
        ],
        "article_details": [
            change(("article", "kind"), "book"),
            change(("article", "colour"), "red"),
        ],
        "trial_search_results": [
            change(("trials", 0, "nct_id"), "12345"),
            change(("query", "phases"), "PHASE3"),
        ],
        "retrieved_items": [
            change(("items", 0, "record", "nct_id"), None),
            change(("not_found", 0), "NCT99999999"),
        ],
        "analysis_result": [
            change(("rows", 0, "percent"), 151.4),
            change(("operation",), "compare"),  # compare without group_by and groups
            change(("operation",), "summary"),  # summary without stats
        ],
        "query_suggestion": [
            change(("target",), "google"),
            change(("query",), ""),
            change(("querry",), "typo"),
        ],
        "ai_column_suggestion": [
            change(("categories",), None, delete=True),
            change(("output_type",), "yes_no"),  # a yes/no column with categories
            change(("categories",), ["only one"]),
        ],
        "filter_suggestion": [
            change(("filters",), {}),
            change(("filters", "journal"), "Lancet"),
            change(("filters", "year_from"), "2020"),
        ],
        "trial_search_suggestion": [
            {"phases": ["PHASE3"], "explanation": "Nothing to search for."},
            change(("phases",), ["Phase 3"]),
            change(("start_from",), "2020"),
        ],
    }
    return [apply(edit) for edit in cases[name]]


NAMES = [payload.name for payload in BUILTIN_PAYLOAD_TYPES]


def test_every_builtin_payload_is_registered_and_described() -> None:
    assert sorted(NAMES) == sorted(EXAMPLES)
    for payload in BUILTIN_PAYLOAD_TYPES:
        assert get_payload_type(payload.name) is payload
        assert payload.description and payload.accept_behaviour
        assert payload.schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert payload.schema["additionalProperties"] is False
        assert payload.is_global == (payload.source == "tool")


@pytest.mark.parametrize("name", NAMES)
def test_the_schema_accepts_a_realistic_payload(name: str) -> None:
    data: JsonValue = EXAMPLES[name]
    assert get_payload_type(name).payload(data).data == data


@pytest.mark.parametrize("name", NAMES)
def test_the_schema_refuses_broken_payloads(name: str) -> None:
    for data in broken(name):
        with pytest.raises(PayloadError) as caught:
            get_payload_type(name).validate(data)
        assert caught.value.args[0].startswith(f"{name}: ")


def test_a_failed_source_may_not_hide_its_error() -> None:
    schema = get_payload_type("literature_search_results")
    data = copy.deepcopy(EXAMPLES["literature_search_results"])
    data["sources"][1]["error"] = ""
    with pytest.raises(PayloadError, match="sources/1/error"):
        schema.validate(data)


def test_the_trial_codes_are_clinicaltrials_codes() -> None:
    """Every code ClinicalTrials.gov uses is accepted in a trial search suggestion, and
    nothing else."""
    schema = get_payload_type("trial_search_suggestion")
    data = copy.deepcopy(EXAMPLES["trial_search_suggestion"])
    data["phases"] = list(TRIAL_PHASES)
    data["statuses"] = list(TRIAL_STATUSES)
    schema.validate(data)
    data["statuses"] = ["ONGOING"]
    with pytest.raises(PayloadError, match="statuses/0"):
        schema.validate(data)


LLM_NAMES = [p.name for p in BUILTIN_PAYLOAD_TYPES if p.source == "llm"]


@pytest.mark.parametrize("name", LLM_NAMES)
def test_the_instructions_show_a_line_the_parser_and_schema_accept(name: str) -> None:
    payload = get_payload_type(name)
    assert payload.parse_marker is not None and payload.parser is not None
    assert payload.llm_instructions is not None
    (line,) = [
        line
        for line in payload.llm_instructions.splitlines()
        if line.startswith(payload.parse_marker)
    ]
    payload.validate(payload.parser(line.removeprefix(payload.parse_marker)))
    assert "last line" in payload.llm_instructions


@pytest.mark.parametrize("name", LLM_NAMES)
def test_each_llm_payload_parses_what_a_model_writes(name: str) -> None:
    payload = get_payload_type(name)
    assert payload.parser is not None
    text = json.dumps(EXAMPLES[name])
    fenced = f"\n```json\n{text}\n```\nLet me know if you want changes."
    assert payload.validate(payload.parser(fenced)) == EXAMPLES[name]
    assert payload.parser(f" {text} trailing words") == EXAMPLES[name]


def test_make_json_parser_reports_malformed_json() -> None:
    parse = make_json_parser("query_suggestion")
    for text in ('{"query": "asthma", "target": }', "", "```json\n", "no json here"):
        with pytest.raises(PayloadError) as caught:
            parse(text)
        assert caught.value.args[0].startswith("query_suggestion: the JSON after the marker")
