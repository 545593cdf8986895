"""Reading citations from an answer: which sentence cites which pack keys, and the
references a model wrote itself."""

from __future__ import annotations

from scholarstream.grounding import EvidencePack
from scholarstream.grounding.core import foreign_references, read_markers
from scholarstream.papers import Author, Identifiers, Paper


def cited(text: str) -> list[tuple[str, list[int]]]:
    sentences, _ = read_markers(text)
    return [(s.text, s.keys) for s in sentences]


def test_keys_lists_and_ranges_are_read_per_sentence() -> None:
    text = (
        "Aspirin lowers risk [1]. Statins too [2, 4]. Both in trials [5-7]. And cohorts [3\u20134]."
    )
    assert cited(text) == [
        ("Aspirin lowers risk.", [1]),
        ("Statins too.", [2, 4]),
        ("Both in trials.", [5, 6, 7]),
        ("And cohorts.", [3, 4]),
    ]


def test_a_marker_after_the_full_stop_belongs_to_the_sentence_before() -> None:
    assert cited("Mortality fell. [2] Bleeding rose.") == [
        ("Mortality fell.", [2]),
        ("Bleeding rose.", []),
    ]


def test_list_items_are_sentences_of_their_own() -> None:
    assert cited("- Dose matters [1]\n- Timing matters [2]") == [
        ("- Dose matters", [1]),
        ("- Timing matters", [2]),
    ]


def test_links_footnotes_and_absurd_ranges_are_not_citations() -> None:
    assert cited("See [the trial](https://x.org) and [3](https://y.org) or note[^2].") == [
        ("See [the trial](https://x.org) and [3](https://y.org) or note[^2].", [])
    ]
    # A range nobody meant is read as its two ends, not a thousand keys.
    assert cited("All of them [1-1000].") == [("All of them.", [1, 1000])]


def pack_of(*papers: Paper) -> EvidencePack:
    return EvidencePack.of("q", [(p, "library", 0.0) for p in papers])


def test_references_the_model_wrote_itself_are_found_unless_the_pack_has_them() -> None:
    known = Paper(
        title="Known trial",
        ids=Identifiers(doi="10.1056/NEJMoa2034577", pmid="33301246"),
        authors=[Author(name="Polack, F", family="Polack")],
    )
    text = (
        "As shown (doi:10.1056/NEJMoa2034577) and PMID: 33301246, by Polack et al., 2020. "
        "Also doi:10.9999/made.up.1, PMID 12345678, Nguyen et al. (2019) and (Osei et al., 2021)."
    )
    refs = foreign_references(text, pack_of(known))
    assert [(r.kind, r.text) for r in refs] == [
        ("doi", "10.9999/made.up.1"),
        ("pmid", "PMID 12345678"),
        ("author_year", "Nguyen et al. (2019)"),
        ("author_year", "Osei et al., 2021"),
    ]


def test_a_year_in_running_text_or_after_an_acronym_is_not_a_reference() -> None:
    text = "Since 2019 and in March 2020 cases rose; the WHO (2021) agreed."
    assert foreign_references(text, pack_of()) == []
