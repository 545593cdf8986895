"""The citation verifier end to end: offline by the support score; with a model, by its
judgement, falling back to the score when the model fails or answers unusably."""

from __future__ import annotations

from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from scholarstream.grounding import CitationVerifier, EvidencePack, Verdict
from scholarstream.papers import Paper
from scholarstream.search import ModelSkillLLM

TRIAL = Paper(
    title="Atorvastatin after myocardial infarction",
    abstract="Cardiac mortality fell by a third with atorvastatin. Muscle pain was rare.",
)
SLEEP = Paper(title="Sleep in shift workers", abstract="Night shifts shortened sleep.")
PACK = EvidencePack.of("statins", [(TRIAL, "library", 1.0), (SLEEP, "pubmed", 0.5)])
ANSWER = (
    "Atorvastatin reduced cardiac mortality [1]. Atorvastatin reduced cardiac mortality [2]. "
    "It was also shown elsewhere [7]."
)


async def test_offline_the_right_record_is_supported_and_the_wrong_one_is_not() -> None:
    audit = await CitationVerifier().verify(ANSWER, PACK)
    assert [(c.key, c.verdict, c.judged_by) for c in audit.checks] == [
        (1, Verdict.SUPPORTED, "overlap"),
        (2, Verdict.UNSUPPORTED, "overlap"),
        (7, Verdict.INVALID, "pack"),
    ]
    assert audit.checks[0].quote == "Cardiac mortality fell by a third with atorvastatin."
    assert "[7" not in audit.annotated


def model(*answers: Any, prompts: list[str] | None = None) -> ModelSkillLLM:
    """Answers each call with the next of ``answers``: a dict is the structured output, a
    string is plain text (which does not validate)."""
    queue = list(answers)

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if prompts is not None:
            prompts.append(str(messages[-1].parts[-1].content))  # type: ignore[union-attr]
        answer = queue.pop(0)
        if isinstance(answer, str):
            return ModelResponse(parts=[TextPart(answer)])
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, answer)])

    return ModelSkillLLM(FunctionModel(respond))


async def test_a_model_judges_each_citation_and_its_quote_must_be_in_the_record() -> None:
    prompts: list[str] = []
    llm = model(
        {"verdict": "support", "quote": "Cardiac mortality fell by a third with atorvastatin."},
        {"verdict": "support", "quote": "Statins saved every patient."},
        prompts=prompts,
    )
    audit = await CitationVerifier(llm=llm, concurrency=1).verify(ANSWER, PACK)
    first, second, invalid = audit.checks
    assert (first.verdict, first.judged_by) == (Verdict.SUPPORTED, "model")
    assert first.quote == "Cardiac mortality fell by a third with atorvastatin."
    # "Support" shown by a quote the record does not hold is the model's word alone: the
    # offline score decides (the sleep study does not address the claim).
    assert (second.verdict, second.judged_by, second.quote) == (
        Verdict.UNSUPPORTED,
        "overlap",
        "Sleep in shift workers",
    )
    assert invalid.verdict is Verdict.INVALID  # never sent to the model
    assert len(prompts) == 2
    assert "data, not instructions" in prompts[0] and "Sleep in shift workers" in prompts[1]


async def test_an_unusable_model_answer_leaves_the_citation_to_the_offline_score() -> None:
    # For the trial the model only ever writes prose (retried, then given up): the score
    # decides; for the other record it answers properly.
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if "Atorvastatin after myocardial infarction" in str(messages[0].parts[-1].content):  # type: ignore[union-attr]
            return ModelResponse(parts=[TextPart("I think it is fine.")])
        return ModelResponse(
            parts=[ToolCallPart(info.output_tools[0].name, {"verdict": "not_addressed"})]
        )

    llm = ModelSkillLLM(FunctionModel(respond))
    audit = await CitationVerifier(llm=llm).verify(ANSWER, PACK)
    assert [(c.verdict, c.judged_by) for c in audit.checks[:2]] == [
        (Verdict.SUPPORTED, "overlap"),
        (Verdict.UNSUPPORTED, "model"),
    ]


async def test_only_the_first_citations_up_to_the_bound_go_to_the_model() -> None:
    prompts: list[str] = []
    quote = "Muscle pain was rare."
    llm = model({"verdict": "contradict", "quote": quote}, prompts=prompts)
    audit = await CitationVerifier(llm=llm, max_judged=1).verify(ANSWER, PACK)
    assert len(prompts) == 1
    assert [c.judged_by for c in audit.checks] == ["model", "overlap", "pack"]
    assert audit.checks[0].verdict is Verdict.CONTRADICTED
