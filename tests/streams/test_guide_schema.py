"""The JSON schema the guide's answer is asked in from a local server (issue 22): the
server's grammar follows it, so it names the steps and fields that exist instead of any
string (a small model invented "data_step" and "target_field")."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel

from scholarstream.llm import ModelCapabilities, ResolvedModel
from scholarstream.streams import CreationSession, ModelGuide, WorkflowStep
from scholarstream.streams.core import COLLECTED_FIELDS
from tests.streams.script import answer, run_turn


def recording_guide(reply: dict[str, Any], schemas: list[dict[str, Any]]) -> ModelGuide:
    async def stream(
        messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        sent = info.model_request_parameters.output_object
        assert sent is not None, "the answer was not asked for as a JSON schema"
        schemas.append(sent.json_schema)
        yield json.dumps(reply)

    resolved = ResolvedModel(
        "default",
        "test:local",
        "test",
        FunctionModel(stream_function=stream),
        "none",
        capabilities=ModelCapabilities(structured_output="native"),
    )
    return ModelGuide(resolved)


def enum_of(schema: dict[str, Any], name: str) -> list[str]:
    (choice,) = [c for c in schema["properties"][name]["anyOf"] if c.get("type") == "string"]
    values: list[str] = choice["enum"]
    return values


async def test_the_schema_names_the_steps_and_fields_that_exist() -> None:
    schemas: list[dict[str, Any]] = []
    guide = recording_guide(answer("What is the purpose?"), schemas)
    turn = await run_turn(CreationSession(), "hi", None, guide)
    assert turn.result.message == "What is the purpose?"
    (schema,) = schemas
    assert enum_of(schema, "next_step") == [step.value for step in WorkflowStep]
    assert enum_of(schema, "target_field") == list(COLLECTED_FIELDS)
    extracted = schema["properties"]["extracted_data"]
    assert extracted["additionalProperties"] is False
    assert list(extracted["properties"]) == list(COLLECTED_FIELDS)
    assert extracted["properties"]["stream_type"]["enum"][0] == "competitive"
    assert extracted["properties"]["report_frequency"]["enum"] == [
        "daily",
        "weekly",
        "biweekly",
        "monthly",
    ]
    keywords = extracted["properties"]["keywords"]["anyOf"]
    assert {"array", "string"} == {kind["type"] for kind in keywords}
    assert schema["properties"]["suggestions"]["maxItems"] == 8
    assert schema["required"] == ["mode", "message"]


async def test_names_outside_the_schema_are_still_dropped_after_the_turn() -> None:
    """The enums bind the server's grammar; a cloud model that ignores them loses only the
    bad parts of its answer, as before."""
    schemas: list[dict[str, Any]] = []
    reply = answer(
        "Noted.",
        next_step="data_step",
        target_field="target_field",
        extracted_data={"purpose": "Track obesity drugs", "data_step": "x"},
    )
    turn = await run_turn(CreationSession(), "hi", None, recording_guide(reply, schemas))
    assert turn.result.updated_config.purpose == "Track obesity drugs"
    assert turn.result.next_step == WorkflowStep.EXPLORATION
    assert turn.result.target_field is None
    assert turn.result.warnings
