"""The embedding model that ships, loaded from the installed packages with no network."""

from __future__ import annotations

from collections.abc import AsyncIterator

import numpy as np
import pytest

from scholarstream.embeddings import MiniLMEmbedder, shipped_embedder
from scholarstream.runtime import Runtime
from scholarstream.settings import Settings
from scholarstream.sources.library import LibraryQuery
from tests.helpers import make_runtime, new_user
from tests.library.test_semantic import PAPERS, add


@pytest.fixture(scope="module")
def model() -> MiniLMEmbedder:
    return shipped_embedder(threads=1)


def test_paraphrases_are_closer_than_unrelated_texts(model: MiniLMEmbedder) -> None:
    heart_attack, infarction, nets = model.embed_documents(
        ["heart attack", "myocardial infarction", "insecticide-treated bed nets for malaria"]
    )
    assert heart_attack @ infarction > 0.5
    assert heart_attack @ nets < 0.2
    vectors = model.embed_documents(["a", "much longer text " * 200])
    assert vectors.shape == (2, model.dimension)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_a_query_vector_equals_the_same_text_as_a_document(model: MiniLMEmbedder) -> None:
    text = "statins after myocardial infarction"
    assert np.allclose(model.embed_query(text), model.embed_documents([text])[0], atol=1e-5)


@pytest.fixture
async def runtime(db_settings: Settings, model: MiniLMEmbedder) -> AsyncIterator[Runtime]:
    enabled = db_settings.semantic.model_copy(update={"enabled": True})
    runtime = make_runtime(db_settings.model_copy(update={"semantic": enabled}), embedder=model)
    yield runtime
    await runtime.close()


async def test_library_search_finds_by_meaning_with_the_shipped_model(runtime: Runtime) -> None:
    owner = await new_user(runtime)
    await add(runtime, owner, PAPERS)
    await runtime.library.semantic.build(owner.id)

    page = await runtime.library.search(owner.id, LibraryQuery(text="preventing malaria"))

    # No record says "malaria": the nets against Plasmodium are found by meaning.
    assert page.items[0].record.title == PAPERS[1].title
