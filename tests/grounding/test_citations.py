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
    # A range nobody meant is read as its two ends, not a hundred keys.
    assert cited("All of them [1-100].") == [("All of them.", [1, 100])]
    # An interval, a year or a key no pack holds is text, not a citation.
    assert cited("Scores in [0, 1] rose in [2019] [1000].") == [
        ("Scores in [0, 1] rose in [2019] [1000].", [])
    ]


def test_chained_ranges_markers_on_their_own_lines_and_abbreviations() -> None:
    assert cited("Claim [1-3-5]. Next [2\u20135-7].") == [
        ("Claim.", [1, 3, 5]),
        ("Next.", [2, 5, 7]),
    ]
    assert cited("Claim.\n[1]\n[2]\nNext.") == [("Claim.", [1, 2]), ("Next.", [])]
    assert cited("Smith et al. 2019 showed it [2]. See Fig. 2 [3].") == [
        ("Smith et al. 2019 showed it.", [2]),
        ("See Fig. 2.", [3]),
    ]
    # A reference list the model wrote: each line is its own sentence, not the one above.
    assert cited("Mortality fell [1].\n\n[2] Lee J. Statins.")[:2] == [
        ("Mortality fell.", [1]),
        ("Lee J.", [2]),
    ]


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
        "Also doi:10.9999/made.up.1, PMID 12345678, Nguyen et al. (2019), (Osei et al., 2021)"
        " and (Park, 2018); doi:10.1016/S0140-6736(20)30183-5."
    )
    refs = foreign_references(text, pack_of(known))
    assert [(r.kind, r.text) for r in refs] == [
        ("doi", "10.9999/made.up.1"),
        ("pmid", "PMID 12345678"),
        ("author_year", "Nguyen et al. (2019)"),
        ("author_year", "Osei et al., 2021"),
        ("author_year", "Park, 2018"),
        ("doi", "10.1016/S0140-6736(20)30183-5"),
    ]


def test_a_year_in_running_text_or_after_an_acronym_is_not_a_reference() -> None:
    text = "Since 2019 and in March 2020 cases rose; the WHO (2021) agreed."
    assert foreign_references(text, pack_of()) == []
