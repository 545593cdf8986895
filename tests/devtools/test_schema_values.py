"""The development provider's made-up documents validate against the schemas they answer:
pydantic's schemas (nested, recursive, unions, constraints) and hand-written JSON schemas."""

from __future__ import annotations

from datetime import date
from enum import StrEnum
from typing import Annotated, Any, Literal

import pytest
from jsonschema import Draft202012Validator
from pydantic import BaseModel, Field

from scholarstream.devtools import instance_for, invalid_instance_for


class Phase(StrEnum):
    one = "phase 1"
    two = "phase 2"


class Author(BaseModel):
    name: Annotated[str, Field(min_length=12, max_length=40)]
    orcid: str | None = None


class Node(BaseModel):
    label: str
    children: list[Node] = []


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: Annotated[int, Field(ge=1, le=9)]


class Dog(BaseModel):
    kind: Literal["dog"]
    weight: Annotated[float, Field(gt=0, lt=80)]


class Paper(BaseModel):
    title: str
    year: Annotated[int, Field(ge=1900, le=2030)]
    score: Annotated[float, Field(ge=0, le=1)]
    phase: Phase
    tags: Annotated[list[str], Field(min_length=2, max_length=4)]
    authors: list[Author]
    published: date
    tree: Node
    pet: Annotated[Cat | Dog, Field(discriminator="kind")]
    either: int | str
    maybe: Author | None = None
    counts: dict[str, int] = {}


HAND_WRITTEN: dict[str, dict[str, Any]] = {
    "tuple": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]},
    "unique": {"type": "array", "items": {"type": "integer"}, "minItems": 3, "uniqueItems": True},
    "one of overlapping": {"oneOf": [{"type": "number", "multipleOf": 0.5}, {"type": "string"}]},
    "all of": {
        "allOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"properties": {"b": {"type": "boolean"}}, "required": ["b"]},
        ]
    },
    "exclusive bounds": {"type": "integer", "exclusiveMinimum": 3, "exclusiveMaximum": 5},
    "multiple of": {"type": "integer", "minimum": 7, "multipleOf": 5},
    "formats": {
        "type": "object",
        "properties": {
            f: {"type": "string", "format": f} for f in ("date-time", "email", "uri", "uuid")
        },
        "required": ["date-time", "email", "uri", "uuid"],
    },
    "min properties": {
        "type": "object",
        "additionalProperties": {"type": "integer", "minimum": 2},
        "minProperties": 2,
    },
    "pattern": {"type": "string", "pattern": "^[0-9]{4}$"},
    "type list": {"type": ["null", "integer"], "minimum": -3, "maximum": -1},
    "const and enum": {
        "type": "object",
        "properties": {"v": {"const": 3}, "e": {"enum": ["x", "y"]}},
        "required": ["v", "e"],
    },
    "refs in definitions": {
        "definitions": {"leaf": {"type": "string", "minLength": 30}},
        "type": "array",
        "items": {"$ref": "#/definitions/leaf"},
        "maxItems": 1,
    },
    "empty array only": {"type": "array", "maxItems": 0},
    "strict OpenAI": {
        "type": "object",
        "properties": {"q": {"type": "string"}, "n": {"type": ["integer", "null"]}},
        "required": ["q", "n"],
        "additionalProperties": False,
    },
}


SCHEMAS = {
    "pydantic Paper": Paper.model_json_schema(),
    "pydantic Node (recursive)": Node.model_json_schema(),
    **HAND_WRITTEN,
}


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_the_made_up_document_validates_against_its_schema(name: str) -> None:
    schema = SCHEMAS[name]
    document = instance_for(schema)
    errors = [e.message for e in Draft202012Validator(schema).iter_errors(document)]
    assert errors == [], f"{name}: {document!r}"


def test_a_pydantic_model_reads_the_document_back() -> None:
    paper = Paper.model_validate(instance_for(Paper.model_json_schema()))
    assert len(paper.tags) == 2
    assert len(set(paper.tags)) == 2  # distinct items read like real ones
    assert 1900 <= paper.year <= 2030
    assert paper.pet.kind in ("cat", "dog")


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_the_broken_document_does_not_validate(name: str) -> None:
    schema = SCHEMAS[name]
    assert not Draft202012Validator(schema).is_valid(invalid_instance_for(schema))


# --- answering a prompt, as a capable model reads it ---------------------------------------

STATUS: dict[str, Any] = {"type": "string", "enum": ["draft", "submitted", "accepted", "rejected"]}
CHANGE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "answer": {"type": "string", "minLength": 1},
        "next": {"anyOf": [STATUS, {"type": "null"}], "default": None},
        "changes": {
            "type": "object",
            "properties": {
                "title": {"type": "string", "minLength": 1},
                "year": {"type": "integer", "minimum": 1900},
                "status": STATUS,
            },
            "additionalProperties": False,
        },
    },
    "required": ["answer"],
    "additionalProperties": False,
}


def test_without_a_prompt_an_enum_takes_its_first_value_and_an_object_every_property() -> None:
    document = instance_for(CHANGE)
    assert document["next"] == "draft"
    assert set(document["changes"]) == {"title", "year", "status"}


@pytest.mark.parametrize(
    ("prompt", "chosen"),
    [
        # The prompt offers some of the values: the furthest one it offers.
        ("You may move the paper to: draft, submitted.", "submitted"),
        ("Valid next states: submitted, accepted or rejected\nAnswer in JSON.", "rejected"),
        ('Choose "accepted" or "rejected".', "rejected"),
        # A list of every value restricts nothing; values named apart are not a list.
        ("One of: draft, submitted, accepted, rejected", "draft"),
        ("It was submitted in May, then it was rejected.", "draft"),
        ("Nothing about the states here.", "draft"),
    ],
)
def test_an_enum_takes_the_furthest_value_the_prompt_offers(prompt: str, chosen: str) -> None:
    document = instance_for(CHANGE, prompt=prompt)
    assert document["next"] == chosen
    assert Draft202012Validator(CHANGE).is_valid(document)


def test_an_object_of_optional_values_echoes_only_what_the_prompt_gives() -> None:
    prompt = (
        'Current record: {"title": "Otitis in spaniels", "year": "not a year", "other": 1}\n'
        "Change what the user asks."
    )
    document = instance_for(CHANGE, prompt=prompt)
    # The title as given; the year given is not one; the status not given at all.
    assert document["changes"] == {"title": "Otitis in spaniels"}
    assert Draft202012Validator(CHANGE).is_valid(document)
    assert instance_for(CHANGE, prompt="Change what the user asks.")["changes"] == {}
    # The answer's own properties (some required) are still all there.
    assert set(document) == {"answer", "next", "changes"}
