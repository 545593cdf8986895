"""Names that hold an animal or a verb, limits said in words (study designs, humans only,
years shut out), and what a follow-up keeps when it asks about a facet or a setting."""

from __future__ import annotations

import pytest

from scholarstream.understanding import find_study_types, read_message
from tests.understanding.conversation import TODAY, chain, kinds_of


def test_an_animal_inside_a_disease_s_name_names_no_population() -> None:
    assert ("population", "african swine") not in kinds_of("african swine fever vaccines")
    assert kinds_of("bovine tuberculosis in badgers") == [
        ("condition", "bovine tuberculosis"),
        ("population", "badgers"),
    ]


def test_a_disease_with_the_same_head_takes_its_sibling_s_place_inside_a_value() -> None:
    steps = chain(
        "african swine fever vaccine candidates in development",
        "what about classical swine fever in wild boar",
    )
    query = steps[1][1].query()
    assert "classical swine fever vaccine" in query and "african" not in query
    assert "wild boar" in query


@pytest.mark.parametrize(
    ("said", "study_type"),
    [
        ("cluster randomised only", "randomized controlled trial"),
        ("only double-blind trials", "randomized controlled trial"),
        ("prospective cohorts", "cohort study"),
        ("reviews only", "review"),
        ("qualitative studies only", "qualitative study"),
        ("longitudinal studies", "longitudinal study"),
    ],
)
def test_study_designs_said_in_many_ways_are_limits(said: str, study_type: str) -> None:
    _, found = find_study_types(said)
    assert found == [study_type]


def test_non_randomised_studies_are_no_randomised_trials() -> None:
    assert find_study_types("non-randomised studies")[1] == []


@pytest.mark.parametrize(
    "said", ["human studies only", "no animal studies", "exclude animal studies", "humans only"]
)
def test_humans_only_is_a_limit_to_people_not_words_about_animals(said: str) -> None:
    steps = chain("SGLT2 inhibitors in heart failure", said)
    reading, topic = steps[1]
    assert reading == "slot_fill"
    assert topic.query() == "SGLT2 inhibitors heart failure humans"


@pytest.mark.parametrize(
    ("said", "years"),
    [
        ("nothing before 2019", (2019, None)),
        ("exclude anything published before 2015", (2015, None)),
        ("leave out pre-2000 work", (2000, None)),
        ("nothing after 2015", (None, 2015)),
    ],
)
def test_years_shut_out_leave_the_others(said: str, years: tuple[int | None, ...]) -> None:
    reading = read_message(said, TODAY)
    assert (reading.year_from, reading.year_to) == years
    assert reading.values == ()


def test_an_unknown_name_after_in_is_where_not_what_is_asked() -> None:
    steps = chain("robotic hernia repair", "costs", "in the NHS")
    query = steps[2][1].query()
    assert "costs" in query and "NHS" in query


def test_a_facet_of_an_adverse_effect_keeps_the_effect() -> None:
    steps = chain("CAR-T cell therapy neurotoxicity", "risk factors?", "what about cost?")
    assert "neurotoxicity risk factors" in steps[1][1].query()
    assert "risk factors" not in steps[2][1].query()


def test_forgetting_the_main_subject_for_another_starts_afresh() -> None:
    steps = chain(
        "do smartphone bans in schools improve academic performance?",
        "any data from norway?",
        "in the last 3 years",
        "forget phones, what about four-day school weeks and achievement",
    )
    reading, topic = steps[3]
    assert reading == "new_question"
    assert topic.query() == "four-day school weeks achievement"
    assert (topic.year_from, topic.year_to) == (None, None)


def test_a_verb_of_effect_parts_the_treatment_from_the_outcome() -> None:
    assert kinds_of("does the mediterranean diet slow cognitive decline?") == [
        ("intervention", "mediterranean diet"),
        ("condition", "cognitive decline"),
    ]


def test_an_age_group_narrows_people_named_by_their_treatment() -> None:
    steps = chain(
        "apixaban vs warfarin in patients on hemodialysis with afib", "in elderly ppl >80"
    )
    query = steps[1][1].query()
    assert "hemodialysis" in query and "elderly" in query and "ppl" not in query


def test_a_drug_named_before_it_is_what_it_refers_to() -> None:
    steps = chain(
        "Which companies have oral GLP-1 receptor agonists in phase 3?",
        "what about pfizer's danuglipron, why was it discontinued",
    )
    kinds = {v.text: v.kind for v in steps[1][1].values}
    assert kinds["danuglipron"] == "intervention"


def test_a_drug_the_pronoun_is_acted_on_by_is_another_treatment_of_the_effect() -> None:
    steps = chain(
        "denosumab discontinuation and rebound vertebral fractures",
        "does giving zoledronate afterwards prevent it",
    )
    assert "denosumab" in steps[1][1].query()


def test_when_an_outcome_is_measured_is_an_aspect_of_the_topic() -> None:
    steps = chain("orforglipron vs oral semaglutide for obesity", "weight loss at 72 weeks")
    reading, topic = steps[1]
    assert reading == "followup_continuation"
    assert "orforglipron" in topic.query() and "72 weeks" in topic.query()


def test_standard_clinical_abbreviations_have_their_heading() -> None:
    (value,) = read_message("and afib?", TODAY).values
    assert value.heading == "Atrial Fibrillation"


def test_words_of_their_own_instead_take_the_place_of_the_first_subject_only() -> None:
    steps = chain(
        "computer vision for early lameness detection in dairy cows", "accelerometers instead"
    )
    query = steps[1][1].query()
    assert "accelerometers" in query and "lameness" in query and "computer vision" not in query


@pytest.mark.parametrize(
    ("said", "years"),
    [("2024 and 2025 only", (2024, 2025)), ("from the last couple of years", (2024, None))],
)
def test_more_date_phrases(said: str, years: tuple[int | None, ...]) -> None:
    reading = read_message(said, TODAY)
    assert (reading.year_from, reading.year_to) == years


@pytest.mark.parametrize("said", ["sorry, I meant high school", "sorry, high school I meant"])
def test_a_correction_puts_the_meant_value_in_place(said: str) -> None:
    steps = chain("retrieval practice and long term retention in university students", said)
    query = steps[1][1].query()
    assert "retrieval practice" in query and "high school" in query
    assert "university" not in query and "meant" not in query and "sorry" not in query


def test_what_is_compared_with_a_treatment_is_a_treatment() -> None:
    steps = chain(
        "prolonged exposure vs cognitive processing therapy for PTSD in veterans",
        "what about MDMA-assisted therapy",
    )
    query = steps[1][1].query()
    assert "MDMA-assisted therapy" in query and "prolonged exposure" not in query
    assert "PTSD" in query


def test_forgetting_one_subject_for_a_part_of_another_keeps_its_words() -> None:
    steps = chain(
        "naloxone distribution and fentanyl test strips for overdose prevention",
        "forget naloxone, just the test strips, do they change behavior",
    )
    query = steps[1][1].query()
    assert "fentanyl test strips" in query and "naloxone" not in query


def test_speakers_of_a_language_are_people_not_a_language_limit() -> None:
    assert kinds_of("in spanish speaking populations") == [
        ("population", "spanish speaking populations")
    ]


def test_a_code_of_the_same_shape_takes_its_sibling_s_place() -> None:
    steps = chain("companies with KRAS G12C inhibitors in clinical development", "what about G12D")
    query = steps[1][1].query()
    assert "KRAS G12D inhibitors" in query and "G12C" not in query


def test_animals_named_by_a_compound_give_way_to_their_kin() -> None:
    steps = chain(
        "neonicotinoid exposure effects on wild bumblebee colonies", "what about solitary bees"
    )
    query = steps[1][1].query()
    assert "solitary bees" in query and "bumblebee" not in query and "neonicotinoid" in query


@pytest.mark.parametrize(
    ("said", "design"),
    [
        ("zebrafish lab studies", "laboratory study"),
        ("field studies only", "field study"),
        ("no pilot studies", "pilot study"),
        ("quasi-experimental studies", "quasi-experimental study"),
    ],
)
def test_designs_named_by_where_or_how_a_study_is_run(said: str, design: str) -> None:
    assert design in find_study_types(said)[1]


def test_a_condition_said_of_the_people_joins_the_topic_s_own() -> None:
    steps = chain("digital CBT-I for insomnia", "in older adults with dementia?")
    query = steps[1][1].query()
    assert "insomnia" in query and "older adults" in query and "dementia" in query


def test_a_short_cue_for_another_topic_starts_afresh() -> None:
    steps = chain(
        "balanced crystalloids vs saline in sepsis",
        "diff topic - fluid intake and kidney stone recurrence",
    )
    reading, topic = steps[1]
    assert reading == "new_question" and "saline" not in topic.query()


def test_a_setting_is_never_spliced_into_the_words_of_the_subject() -> None:
    steps = chain(
        "heat stress effects on milk yield in holstein cows", "in tropical climates like brazil"
    )
    query = steps[1][1].query()
    assert "heat stress" in query and "brazil" in query


@pytest.mark.parametrize(
    "said",
    ["appreciate it", "that'll do", "ok I'm good", "merci", "that's a wrap", "let's stop there"],
)
def test_more_ways_to_close_a_conversation(said: str) -> None:
    assert read_message(said, TODAY).closing


@pytest.mark.parametrize(
    "said", ["can we stop here and look at sepsis instead", "im fine with RCTs"]
)
def test_a_message_that_goes_on_is_no_closing(said: str) -> None:
    assert not read_message(said, TODAY).closing


@pytest.mark.parametrize(
    "said", ["with protein supplementation", "combined with protein supplements"]
)
def test_a_treatment_given_with_the_one_in_play_joins_it(said: str) -> None:
    steps = chain("resistance training for sarcopenia in older adults", said)
    query = steps[1][1].query()
    assert "resistance training" in query and "protein" in query


@pytest.mark.parametrize(
    ("said", "value"),
    [
        ("community health workers in sub-Saharan Africa, thanks in advance", "sub-Saharan Africa"),
        ("hmm, and in children", "children"),
        ("actually, include observational studies too", "observational studies"),
    ],
)
def test_filler_words_name_nothing(said: str, value: str) -> None:
    words = " ".join(v.text for v in read_message(said, TODAY).values)
    assert value in words
    for filler in ("advance", "hmm", "include", "actually"):
        assert filler not in words


def test_what_a_pipeline_goes_beyond_is_left_out() -> None:
    reading = read_message("Moderna's mRNA vaccine pipeline beyond COVID-19", TODAY)
    assert reading.dropped == ("COVID-19",)
    assert read_message("survival beyond 5 years", TODAY).dropped == ()


@pytest.mark.parametrize(
    ("said", "meant"),
    [("waht about in childern?", "children"), ("adolecents with asthma", "adolescents")],
)
def test_people_misspelt_are_read_as_meant(said: str, meant: str) -> None:
    assert meant in [v.text for v in read_message(said, TODAY).values]


def test_a_real_word_is_never_read_as_a_slip() -> None:
    assert ("topic", "patents") in kinds_of("patents for CRISPR")
