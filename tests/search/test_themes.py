"""Themes name subjects, not spellings (issue 26): "Dogs", "dog" and "DOGS" are one theme,
"CONGESTIVE-HEART-FAILURE" reads "Congestive heart failure", and themes a model names two
ways ("Dogs", "dog") are merged too. Through the organizers' public ``organize``."""

from __future__ import annotations

from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from scholarstream.papers import Paper
from scholarstream.search import (
    LLMResultOrganizer,
    ModelSkillLLM,
    PaperCollection,
    RuleResultOrganizer,
    ScoredPaper,
    SearchStrategy,
)

STRATEGY = SearchStrategy.model_validate({"queries": [{"source": "library", "query": "dogs"}]})


def scored(n: int, *, keywords: list[str] | None = None, mesh: list[str] | None = None,
           title: str | None = None) -> ScoredPaper:  # fmt: skip
    paper = Paper(
        title=title or f"Paper {n} on canine eyes",
        year=2020,
        keywords=keywords or [],
        mesh_terms=mesh or [],
    )
    return ScoredPaper(id=f"title:{n}", record=paper, score=0.9 - n / 100, reason="-")


def themes(collection: PaperCollection) -> dict[str, list[str]]:
    (grouping,) = [g for g in collection.groupings if g.dimension == "theme"]
    return {group.label: group.paper_ids for group in grouping.groups}


async def test_one_subject_written_several_ways_is_one_theme_named_readably() -> None:
    papers = [
        *(scored(n, mesh=["Dogs", "Cataract"]) for n in range(0, 6)),  # MeSH
        *(scored(n, keywords=["dog", "glaucoma"]) for n in range(6, 9)),  # author keywords
        *(scored(n, keywords=["DOGS", "GLAUCOMA"]) for n in range(9, 11)),  # WoS Keywords Plus
        *(scored(n, keywords=["CONGESTIVE-HEART-FAILURE"]) for n in range(11, 14)),
        *(scored(n, keywords=["Congestive heart failure"]) for n in range(14, 15)),
    ]
    collection = await RuleResultOrganizer().organize(papers, STRATEGY, "eye disease in dogs")

    found = themes(collection)
    assert list(found) == ["Dogs", "Congestive heart failure"]
    assert len(found["Dogs"]) == 11
    assert len(found["Congestive heart failure"]) == 4
    assert not any(label.isupper() or "-" in label for label in found)


async def test_title_words_in_singular_and_plural_are_one_theme() -> None:
    titles = ["Cataracts in spaniels", "A cataract in a spaniel", "Spaniel cataracts again",
              "Retinal dysplasia", "Retinal dysplasias in pups"]  # fmt: skip
    papers = [scored(n, title=title) for n, title in enumerate(titles)]
    collection = await RuleResultOrganizer().organize(papers, STRATEGY, "spaniel eyes")

    found = themes(collection)
    # "spaniels" and "spaniel" counted as one word: a theme of the three papers.
    spaniel = [ids for label, ids in found.items() if label.lower().startswith("spaniel")]
    assert spaniel == [[papers[i].id for i in (0, 1, 2)]]
    assert list(found)[1] in ("Retinal", "Dysplasia", "Dysplasias")


def naming(answer: dict[str, Any]) -> ModelSkillLLM:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, answer)])

    return ModelSkillLLM(FunctionModel(respond))


async def test_themes_a_model_names_two_ways_are_merged() -> None:
    papers = [scored(n) for n in range(6)]
    model = naming(
        {
            "themes": [
                {"label": "Dogs", "papers": [1, 2, 3]},
                {"label": "Cataract surgery", "papers": [4]},
                {"label": "dog", "papers": [5]},
            ]
        }
    )
    collection = await LLMResultOrganizer(model).organize(papers, STRATEGY, "eye disease in dogs")

    found = themes(collection)
    assert list(found) == ["Dogs", "Cataract surgery", "Other"]
    assert found["Dogs"] == [papers[i].id for i in (0, 1, 2, 4)]


async def test_a_label_written_in_capitals_keeps_its_roman_numeral_and_single_letters() -> None:
    papers = [
        *(scored(n, keywords=["CHIARI I MALFORMATION"]) for n in range(0, 3)),
        *(scored(n, keywords=["HEPATITIS B"]) for n in range(3, 6)),
        *(scored(n, keywords=["Syringomyelia"]) for n in range(6, 8)),
    ]
    collection = await RuleResultOrganizer().organize(papers, STRATEGY, "chiari")

    found = themes(collection)
    assert set(found) == {"Chiari I malformation", "Hepatitis B", "Syringomyelia"}


async def test_a_grouping_with_one_group_of_every_paper_is_not_offered() -> None:
    # Every paper from the library, none of a known study type: "Other (4)" and
    # "Local library (4)" would only be "All papers (4)" again.
    papers = [scored(n, keywords=["dog"] if n < 2 else ["cat"]) for n in range(4)]
    collection = await RuleResultOrganizer().organize(papers, STRATEGY, "pets")

    dimensions = {g.dimension: g.groups for g in collection.groupings}
    assert "study_type" not in dimensions and "year" not in dimensions
    assert all(len(group.paper_ids) < len(papers) for group in dimensions["theme"])
    assert {g.label for g in dimensions["theme"]} == {"Cat", "Dog"}
