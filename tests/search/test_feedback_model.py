"""The relevance-feedback model refitted judgement after judgement, as a screening run
and a search run's stream use it: what it keeps from one fit to the next must give the
same answer as a model fitted afresh."""

from __future__ import annotations

import numpy as np
import pytest

from scholarstream.papers.ranking import FeedbackModel, FeedbackSettings

TOPICS = {
    True: ["migraine", "triptan", "sumatriptan", "headache", "zolmitriptan", "aura"],
    False: ["soil", "bacteria", "meadow", "alpine", "nitrogen", "fungi", "roots", "rain"],
}


def corpus(size: int, seed: int) -> tuple[list[str], list[bool]]:
    rng = np.random.default_rng(seed)
    common = ["study", "patients", "results", "trial", "effect", "group", "data"]
    texts, labels = [], []
    for _ in range(size):
        relevant = bool(rng.random() < 0.2)
        words = [*rng.choice(TOPICS[relevant], 3), *rng.choice(TOPICS[not relevant], 1)]
        words += list(rng.choice(common, 5))
        texts.append(" ".join(str(w) for w in rng.permutation(words)))
        labels.append(relevant)
    return texts, labels


def fresh(texts: list[str], labels: dict[int, bool]) -> np.ndarray:
    return FeedbackModel(texts).fit(labels).evidence()


def test_refitting_after_each_judgement_matches_a_fresh_fit() -> None:
    texts, truth = corpus(120, seed=1)
    model = FeedbackModel(texts)
    first_relevant = truth.index(True)
    labels = {first_relevant: True, truth.index(False): False}
    for step in range(90):
        model.fit(labels)
        if step % 15 == 0:
            np.testing.assert_allclose(model.evidence(), fresh(texts, labels), atol=1e-6)
        pool = [i for i in range(len(texts)) if i not in labels]
        top = model.rank(pool)[0]
        labels[top] = truth[top]
    model.fit(labels)
    np.testing.assert_allclose(model.evidence(), fresh(texts, labels), atol=1e-6)
    # The model learnt the topic: far more relevant texts came first than the 20% at random.
    found = [truth[i] for i in labels]
    assert sum(found[: sum(truth)]) >= 0.6 * sum(truth)


def test_changed_or_withdrawn_judgements_are_relearnt() -> None:
    texts, truth = corpus(40, seed=2)
    labels = {i: truth[i] for i in range(12)}
    assert FeedbackModel.can_learn(labels.values())
    model = FeedbackModel(texts).fit(labels)

    flipped = labels | {3: not labels[3]}
    np.testing.assert_allclose(model.fit(flipped).evidence(), fresh(texts, flipped), atol=1e-6)

    fewer = {i: label for i, label in flipped.items() if i != 5}
    np.testing.assert_allclose(model.fit(fewer).evidence(), fresh(texts, fewer), atol=1e-6)

    reordered = dict(reversed(list(fewer.items())))
    np.testing.assert_allclose(model.fit(reordered).evidence(), fresh(texts, fewer), atol=1e-6)


def test_a_handful_of_texts_and_a_judged_text_given_twice() -> None:
    texts = [
        "sumatriptan relieves migraine",
        "soil bacteria of meadows",
        "zolmitriptan for migraine attacks",
        "bacteria in alpine soil samples",
        "sumatriptan relieves migraine",  # the judged paper found again
    ]
    model = FeedbackModel(texts).fit({0: True, 1: False, 4: True})

    assert model.rank([3, 2, 1]) == [2, 3, 1]
    probabilities = model.probabilities([2, 3])
    assert probabilities[0] > 0.5 > probabilities[1]
    assert model.probabilities().shape == (5,)


def test_blank_texts_give_no_evidence() -> None:
    model = FeedbackModel(["", " ", ""]).fit({0: True, 1: False})

    assert model.evidence([2]).tolist() == [0.0]
    assert model.probabilities([2]).tolist() == [0.5]


def test_before_any_fit_there_is_no_evidence() -> None:
    model = FeedbackModel(["migraine", "soil", "headache"])

    assert model.evidence().tolist() == [0.0, 0.0, 0.0]
    assert model.rank([2, 0]) == [2, 0]


@pytest.mark.parametrize("size", [2, 3, 25])
def test_the_judged_texts_rank_by_their_label(size: int) -> None:
    texts, _ = corpus(size, seed=3)
    model = FeedbackModel(texts).fit({0: True, 1: False})

    evidence = model.evidence([0, 1])
    assert evidence[0] > evidence[1]


def reference_evidence(texts: list[str], labels: dict[int, bool]) -> np.ndarray:
    """The model as docs/search.md defines it, solved directly: both TF-IDF views from
    scikit-learn, the weighted least-squares system over the judged texts in one dense
    solve, the irrelevant texts' ridge on its 2% steps."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    settings = FeedbackSettings()
    words = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, max_df=0.95)
    characters = TfidfVectorizer(
        analyzer="char_wb", ngram_range=(3, 5), sublinear_tf=True, max_df=0.95, min_df=2
    )
    features = np.hstack(
        [words.fit_transform(texts).toarray(), characters.fit_transform(texts).toarray()]
    ) / np.sqrt(2)
    judged = np.array(list(labels))
    y = np.array([labels[i] for i in judged], dtype=float)
    relevant, irrelevant = y.sum(), len(y) - y.sum()
    weights = np.where(y == 1, 1.0, relevant / (settings.balance * irrelevant))
    weights *= len(y) / weights.sum()
    ridge = 1 / (2 * settings.c * weights)
    step = np.log(1.02)
    ridge[y == 0] = np.exp(np.round(np.log(ridge[y == 0]) / step) * step)
    kernel = features @ features[judged].T
    dual = np.linalg.solve(kernel[judged] + 1 + np.diag(ridge), np.where(y == 1, 1.0, -1.0))
    trained = kernel[judged] @ dual + dual.sum()
    spread = (trained[y == 1].mean() - trained[y == 0].mean()) / 2
    return np.asarray(kernel @ dual / spread)


@pytest.mark.parametrize("seed", [4, 5])
def test_the_model_is_the_documented_least_squares_classifier(seed: int) -> None:
    texts, truth = corpus(80, seed=seed)
    texts[7] = "Naïve  Zolmitriptan\tand a b-c ÉTÉ"  # short words, accents, odd spacing
    labels = {i: truth[i] for i in range(30)}
    labels[7] = True
    model = FeedbackModel(texts)
    for size in (10, 20, 31):  # refitted as labels arrive, as in screening
        model.fit(dict(list(labels.items())[:size]))

    np.testing.assert_allclose(model.evidence(), reference_evidence(texts, labels), atol=1e-5)


def test_the_titles_meaning_ranks_a_paper_that_shares_no_word_with_the_judged_ones() -> None:
    """Two candidates share no word with anything judged; the one whose title means what
    the relevant paper's title means comes first once the meaning view is read."""
    texts = [
        "triptans relieve migraine attacks",  # judged relevant
        "soil bacteria in alpine meadows",  # judged irrelevant
        "neuroleptics for acute headache",  # like the relevant one in meaning only
        "nitrogen uptake by grass roots",  # like the irrelevant one in meaning only
    ]
    meaning = np.array(
        [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.96, 0.28, 0.0], [0.28, 0.96, 0.0]],
        dtype=np.float32,
    )
    labels = {0: True, 1: False}

    words_only = FeedbackModel(texts).fit(labels).evidence([2, 3])
    assert abs(words_only[0] - words_only[1]) < 0.02  # a few shared letters, no more
    with_meaning = FeedbackModel(texts, meaning=meaning).fit(labels)
    assert with_meaning.rank([3, 2]) == [2, 3]
    evidence = with_meaning.evidence([2, 3])
    assert evidence[0] - evidence[1] > abs(words_only[0] - words_only[1]) + 0.03

    # A weight of 0 leaves the meaning out: the words-only model exactly.
    off = FeedbackModel(texts, FeedbackSettings(meaning_weight=0.0), meaning=meaning)
    np.testing.assert_array_equal(off.fit(labels).evidence(), fresh(texts, labels))


def test_one_embedding_per_text_is_required() -> None:
    with pytest.raises(ValueError, match="2 embeddings for 3 texts"):
        FeedbackModel(["a b", "c d", "e f"], meaning=np.zeros((2, 3), dtype=np.float32))
