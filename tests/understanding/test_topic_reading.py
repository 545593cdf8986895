"""A message's typed reading, and how follow-ups update what a conversation is about."""

from __future__ import annotations

import pytest

from scholarstream.understanding import (
    MAX_QUERY_WORDS,
    content_words,
    read_message,
)
from tests.understanding.conversation import TODAY, chain, kinds_of


def test_a_question_is_read_into_typed_slots_with_mesh_headings() -> None:
    reading = read_message(
        "Does dapagliflozin reduce hospitalisation in older adults with heart failure "
        "in Japan? Only RCTs in English published since 2018",
        TODAY,
    )
    kinds = {(v.kind, v.text) for v in reading.values}
    assert ("intervention", "dapagliflozin") in kinds
    assert ("condition", "heart failure") in kinds
    assert ("population", "older adults") in kinds
    assert ("place", "Japan") in kinds
    assert ("study_type", "RCTs") in kinds
    assert ("language", "en") in kinds
    assert (reading.year_from, reading.year_to) == (2018, None)
    headings = {v.text: v.heading for v in reading.values}
    assert headings["heart failure"] == "Heart Failure"
    # Dates, languages and sources filter; they are never query words.
    query = reading.as_topic().query()
    assert "2018" not in query and "since" not in query and "English" not in query


@pytest.mark.parametrize(
    ("phrase", "years"),
    [
        ("since 2020", (2020, None)),
        ("after 2018", (2019, None)),
        ("before 2015", (None, 2014)),
        ("between 2010 and 2015", (2010, 2015)),
        ("in the past five years", (2021, None)),
        ("last decade", (2016, None)),
        ("only recent ones (2020 onward)", (2020, None)),
        ("actually, make that the last 10 years instead", (2016, None)),
        ("since approval in 2013", (2013, None)),
        ("1990s studies", (1990, 1999)),
    ],
)
def test_date_phrases_become_years(phrase: str, years: tuple[int | None, int | None]) -> None:
    reading = read_message(phrase, TODAY)
    assert (reading.year_from, reading.year_to) == years
    assert all(v.kind == "aspect" for v in reading.values)  # "studies" at most


def test_a_new_value_of_a_kind_replaces_the_old_one_in_place() -> None:
    steps = chain(
        "taurine and dilated cardiomyopathy in dogs",
        "what about in cats?",
        "only since 2015",
        "and in Japan?",
        "how about Brazil?",
    )
    assert [reading for reading, _ in steps] == [
        "new_question",
        "slot_fill",
        "slot_fill",
        "slot_fill",
        "slot_fill",
    ]
    last = steps[-1][1]
    assert last.query() == "taurine dilated cardiomyopathy cats Brazil"
    assert last.year_from == 2015  # the date stays until the topic changes


def test_aspects_replace_each_other_and_also_adds() -> None:
    steps = chain(
        "SGLT2 inhibitors in chronic kidney disease",
        "what about safety?",
        "any data on cost-effectiveness?",
        "and mortality as well",
    )
    queries = [topic.query() for _, topic in steps]
    assert queries[1] == "SGLT2 inhibitors chronic kidney disease safety"
    assert queries[2] == "SGLT2 inhibitors chronic kidney disease cost-effectiveness"
    assert queries[3] == "SGLT2 inhibitors chronic kidney disease cost-effectiveness mortality"


def test_a_comparison_keeps_the_old_intervention_as_its_comparator() -> None:
    _, (reading, topic) = chain(
        "SGLT2 inhibitors in chronic kidney disease", "How does dapagliflozin compare?"
    )
    assert reading == "followup_continuation"
    assert [(v.kind, v.text) for v in topic.values] == [
        ("intervention", "dapagliflozin"),
        ("comparator", "SGLT2 inhibitors"),
        ("condition", "chronic kidney disease"),
    ]
    assert "compare" not in topic.query()


def test_a_drug_offered_alone_replaces_the_drug_and_an_outcome_keeps_the_topic() -> None:
    steps = chain(
        "semaglutide for obesity in adolescents",
        "and tirzepatide?",
        "any data on cytokine release syndrome rates?",
    )
    assert steps[1][1].query() == "tirzepatide obesity adolescents"
    # A condition asked about as an outcome is an aspect: the topic's condition stays.
    assert steps[2][1].query() == "tirzepatide obesity adolescents cytokine release syndrome rates"


def test_an_indication_named_with_in_or_for_replaces_the_condition() -> None:
    steps = chain("pembrolizumab in melanoma", "what about for lung cancer?")
    assert steps[1][1].query() == "pembrolizumab lung cancer"


def test_closings_change_nothing_and_search_nothing() -> None:
    for closing in ["Thanks, that's it", "great, that's all I needed", "cheers, all done."]:
        (_, before), (reading, after) = chain("lithium in pregnancy", closing)
        assert reading == "closing"
        assert after == before
    # A thank-you that goes on to ask something is no closing.
    assert chain("lithium in pregnancy", "thanks! and in breastfeeding?")[1][0] != "closing"


def test_a_subject_of_its_own_starts_a_new_topic_and_drops_the_dates() -> None:
    steps = chain(
        "melatonin for delirium in ICU patients since 2019",
        "What is GSK's vaccine pipeline?",
    )
    reading, topic = steps[1]
    assert reading == "new_question"
    assert "melatonin" not in topic.query() and topic.year_from is None
    switch = chain("melatonin for delirium", "new question: gambling harms in young adults")
    assert switch[1][1].query() == "gambling harms young adults"


def test_an_elliptical_question_with_its_own_subject_keeps_the_topic() -> None:
    steps = chain(
        "CAR-T therapy in multiple myeloma",
        "how common was neurotoxicity",
        "rare cases specifically",
    )
    assert [reading for reading, _ in steps[1:]] == [
        "followup_continuation",
        "followup_continuation",
    ]
    assert "multiple myeloma" in steps[2][1].query()


def test_a_long_chain_keeps_the_query_bounded() -> None:
    steps = chain(
        "survival after colic surgery in horses",
        "geriatric horses specifically",
        "what about complications?",
        "and safety?",
        "meta-analyses also",
        "cost-effectiveness as well",
        "in Japan",
        "and Europe too",
        "dosing as well",
        "adherence too",
        "sponsored by AstraZeneca",
        "only since 2019",
    )
    lengths = [len(topic.query().split()) for _, topic in steps]
    assert max(lengths) <= MAX_QUERY_WORDS
    assert "colic surgery" in steps[-1][1].query()


def test_names_are_read_by_their_place_in_the_sentence() -> None:
    assert ("organisation", "GSK") in kinds_of("What is GSK's vaccine pipeline?")
    assert ("place", "Ontario") in kinds_of("is it reimbursed in Ontario?")
    assert ("organisation", "Vertex") in kinds_of("trials run by Vertex")
    (_, _), (_, topic) = chain("Zolgensma reimbursement in Ontario", "and Quebec?")
    assert [v.text for v in topic.of("place")] == ["Quebec"]


def test_noun_stacks_split_where_a_head_ends_a_phrase() -> None:
    assert kinds_of("SGLT2 inhibitors euglycemic ketoacidosis case reports")[:2] == [
        ("intervention", "SGLT2 inhibitors"),
        ("condition", "euglycemic ketoacidosis"),
    ]
    assert kinds_of("prolonged exposure therapy PTSD veterans")[0] == (
        "intervention",
        "prolonged exposure therapy",
    )
    assert ("organisation", "Eli Lilly") in kinds_of(
        "Eli Lilly obesity pipeline beyond tirzepatide"
    )


def test_possessives_name_an_owner_or_an_eponym() -> None:
    assert kinds_of("Novo Nordisk's?") == [("organisation", "Novo Nordisk")]
    assert kinds_of("Fournier's gangrene?") == [("condition", "Fournier's gangrene")]
    assert ("organisation", "GSK") in kinds_of("GSK's vaccine pipeline")


def test_instead_of_and_forget_drop_what_they_name() -> None:
    steps = chain("vitamin D supplementation in pregnancy", "omega-3 instead of vit D")
    assert "vitamin" not in steps[1][1].query() and "omega-3" in steps[1][1].query()
    organisations = chain("Pfizer vaccine pipeline", "Roche too", "forget Roche, what about Amgen")
    assert "Roche" not in organisations[2][1].query()
    assert "Amgen" in organisations[2][1].query()


def test_a_full_question_sharing_only_generic_words_starts_a_new_topic() -> None:
    steps = chain(
        "glyphosate exposure and non-Hodgkin lymphoma in farmers",
        "Is prenatal chlorpyrifos exposure linked to neurodevelopmental problems in children?",
    )
    assert steps[1][0] == "new_question"
    assert "glyphosate" not in steps[1][1].query()
    # "Are there ...": "there" points back at nothing.
    assert not read_message("Are there RCTs of semaglutide for alcohol use disorder?").refers_back


def test_a_named_population_replaces_the_one_in_a_condition_s_name() -> None:
    steps = chain("PM2.5 exposure and childhood asthma in Lagos", "adults")
    query = steps[1][1].query()
    assert "childhood" not in query and "adults" in query and "asthma" in query
    organisations = chain("Eli Lilly obesity pipeline", "Novo Nordisk's?")
    assert "Lilly" not in organisations[1][1].query()


def test_a_sibling_takes_the_place_of_its_kin() -> None:
    ions = chain("hard carbon anodes for sodium-ion batteries", "what about potassium-ion")
    assert ions[1][1].query() == "hard carbon anodes potassium-ion batteries"
    joints = chain("tranexamic acid blood loss in total knee arthroplasty", "hip?")
    query = joints[1][1].query()
    assert "hip" in query and "knee" not in query and "tranexamic acid" in query
    fevers = chain("African swine fever vaccine candidates", "what about classical swine fever")
    assert "African" not in fevers[1][1].query() and "classical swine fever" in fevers[1][1].query()


def test_a_procedure_replaces_a_procedure_and_keeps_the_drug() -> None:
    steps = chain(
        "tranexamic acid to reduce blood loss in hip fracture surgery",
        "what about knee arthroplasty",
    )
    query = steps[1][1].query()
    assert "tranexamic acid" in query and "knee arthroplasty" in query and "hip" not in query


def test_x_instead_takes_the_place_of_the_main_subject() -> None:
    steps = chain("hearing aids and dementia risk", "cochlear implants instead")
    query = steps[1][1].query()
    assert "cochlear implants" in query and "hearing aids" not in query and "dementia" in query


def test_people_named_by_what_they_live_with_are_a_population() -> None:
    assert kinds_of("in people living with HIV") == [("population", "people living with HIV")]
    steps = chain("apixaban bleeding risk in atrial fibrillation", "in patients on dialysis")
    query = steps[1][1].query()
    assert "apixaban" in query and "dialysis" in query
    assert read_message("nothing older than 2018", TODAY).year_from == 2018


def test_a_regulator_s_decision_follows_on() -> None:
    steps = chain("FDA approval of RSV vaccines in older adults", "what did the EMA decide")
    assert steps[1][0] != "new_question"
    assert "RSV" in steps[1][1].query() and "EMA" in steps[1][1].query()
    limits = chain(
        "PFAS in drinking water and thyroid disease", "EPA's new maximum contaminant levels"
    )
    assert limits[1][0] != "new_question" and "PFAS" in limits[1][1].query()


def test_cue_words_used_as_ordinary_words_change_nothing() -> None:
    assert not read_message("perfect adherence to PrEP", TODAY).closing
    assert read_message("ok perfect", TODAY).closing
    dialysis = read_message("why does blood pressure drop during dialysis?", TODAY)
    assert dialysis.dropped == () and "dialysis" in dialysis.as_topic().query()
    assert read_message("fish oil for depression", TODAY).of("population") == []
    assert (
        read_message("since most trials before 2015 were small, any new ones?", TODAY).year_from
        is None
    )
    msm = read_message("PrEP uptake in men who have sex with men", TODAY)
    assert [v.text for v in msm.of("population")] == ["men who have sex with men"]


def test_a_long_question_opening_with_a_preposition_is_a_question_of_its_own() -> None:
    steps = chain(
        "statins in heart failure",
        "In children with ADHD, what is the best first-line drug?",
    )
    assert steps[1][0] == "new_question" and "heart failure" not in steps[1][1].query()
    numbers = chain("GLP-1 agonists for obesity", "what about PD-1?")
    assert "PD-1 agonists" not in numbers[1][1].query()


@pytest.mark.parametrize(
    "lift",
    [
        "forget the date limit",
        "any year is fine",
        "remove the 2020 filter",
        "include older studies too",
        "no date restriction",
        "doesn't have to be recent",
        "regardless of publication year",
    ],
)
def test_a_lifted_date_limit_clears_the_years_and_adds_no_words(lift: str) -> None:
    (_, dated), (reading, lifted) = chain(
        "tranexamic acid in hip fracture surgery since 2020", lift
    )
    assert (dated.year_from, dated.year_to) == (2020, None)
    assert reading == "slot_fill"
    assert (lifted.year_from, lifted.year_to) == (None, None)
    assert lifted.query() == dated.query()


def test_a_lift_and_a_new_value_in_one_message() -> None:
    steps = chain(
        "tranexamic acid in hip fracture surgery since 2020",
        "what about knee arthroplasty, no date restriction",
        "since 2015 then",
    )
    assert steps[1][1].query() == "tranexamic acid knee arthroplasty"
    assert (steps[1][1].year_from, steps[1][1].year_to) == (None, None)
    assert (steps[2][1].year_from, steps[2][1].year_to) == (2015, None)


@pytest.mark.parametrize(
    ("phrase", "years"),
    [
        ("only stuff from last year", (2025, 2025)),
        ("in the last year", (2025, None)),
        ("this decade only", (2020, None)),
    ],
)
def test_calendar_phrases(phrase: str, years: tuple[int | None, int | None]) -> None:
    reading = read_message(phrase, TODAY)
    assert (reading.year_from, reading.year_to) == years


@pytest.mark.parametrize(
    "closing",
    [
        "great, got what I need",
        "cool, that answers my question",
        "nothing more for now",
        "found what I was looking for, thanks",
    ],
)
def test_more_ways_of_closing(closing: str) -> None:
    assert read_message(closing, TODAY).closing
    assert not read_message("nothing more on dosing?", TODAY).closing


def test_a_value_compared_against_is_the_comparator_and_the_subject_stays() -> None:
    steps = chain(
        "metformin in gestational diabetes, neonatal outcomes",
        "vs letrozole?",
        "compared with insulin",
    )
    kinds = [(v.kind, v.text) for v in steps[2][1].values]
    assert ("intervention", "metformin") in kinds
    assert ("comparator", "insulin") in kinds
    assert "letrozole" not in steps[2][1].query()


def test_a_swap_puts_the_new_value_in_the_role_of_the_old_one() -> None:
    steps = chain(
        "vedolizumab vs ustekinumab in ulcerative colitis",
        "swap ustekinumab for tofacitinib",
        "switch to infliximab",
    )
    kinds = [(v.kind, v.text) for v in steps[1][1].values]
    assert ("intervention", "vedolizumab") in kinds
    assert ("comparator", "tofacitinib") in kinds
    assert "ustekinumab" not in steps[1][1].query() and "swap" not in steps[1][1].query()
    assert "switch" not in steps[2][1].query() and "infliximab" in steps[2][1].query()
    # A change named mid-sentence is no swap.
    assert not read_message("change in HbA1c with metformin", TODAY).dropped


def test_a_procedure_mesh_files_as_surgery_replaces_a_procedure() -> None:
    steps = chain(
        "tranexamic acid in total knee arthroplasty, blood loss",
        "and for hip replacement instead?",
    )
    query = steps[1][1].query()
    assert "tranexamic acid" in query and "hip replacement" in query and "knee" not in query


def test_a_condition_mesh_names_whole_is_not_split_at_a_drug_word() -> None:
    steps = chain("semaglutide alcohol use disorder", "what about tirzepatide")
    assert steps[1][1].query() == "tirzepatide alcohol use disorder"


def test_words_of_any_script_are_never_cut() -> None:
    query = read_message("la depresión resistente en personas mayores", TODAY).as_topic().query()
    assert "depresión" in query and "depresi " not in query
    assert read_message("心理治疗 抑郁症", TODAY).values


def test_unknown_words_offered_instead_take_the_subject_s_place() -> None:
    steps = chain(
        "effect of sugar-sweetened beverage taxes on obesity in UK children",
        "what about tobacco taxes instead?",
    )
    query = steps[1][1].query()
    assert "tobacco taxes" in query and "sugar-sweetened" not in query and "UK" in query


def test_kin_in_the_mesh_tree_replace_each_other() -> None:
    steps = chain(
        "antimicrobial resistance in Escherichia coli from pigs in Thailand",
        "how about Klebsiella?",
    )
    query = steps[1][1].query()
    assert "Klebsiella" in query and "Escherichia" not in query and "Thailand" in query


def test_a_comparison_of_unknown_words_keeps_the_first_as_comparator() -> None:
    steps = chain(
        "transformer models for clinical named entity recognition",
        "how does BiLSTM-CRF compare?",
    )
    kinds = [(v.kind, v.text) for v in steps[1][1].values]
    assert ("comparator", "transformer models") in kinds and ("topic", "BiLSTM-CRF") in kinds


def test_search_syntax_is_no_part_of_a_topic() -> None:
    query = read_message("psilocybin[tiab] AND depression[mh]", TODAY).as_topic().query()
    assert query == "psilocybin depression"


def test_slips_in_cue_words_and_years_are_read_as_meant() -> None:
    (_, _), (reading, topic) = chain("yoga for chronic low back pain", "onyl since 2O20")
    assert reading == "slot_fill"
    assert (topic.year_from, topic.query()) == (2020, "yoga chronic low back pain")


@pytest.mark.parametrize(
    "message",
    [
        "tell me more about the second one",
        "what did result 3 find?",
        "is the last paper any good?",
        "summarise #2",
    ],
)
def test_a_result_pointed_at_refers_back_and_is_no_topic(message: str) -> None:
    reading = read_message(message)
    assert reading.refers_back
    assert not reading.values


def test_ordinals_that_belong_to_a_topic_stay() -> None:
    assert [v.text for v in read_message("first episode psychosis treatment").values] == [
        "first episode psychosis treatment"
    ]


@pytest.mark.parametrize(
    ("message", "kinds"),
    [
        # Places typed in lower case, seas and regions; a place in a name is none.
        ("coverage in burkina faso", [("aspect", "coverage"), ("place", "burkina faso")]),
        ("and in the mediterranean?", [("place", "mediterranean")]),
        (
            "the mediterranean diet and cognition",
            [("intervention", "mediterranean diet"), ("topic", "cognition")],
        ),
        # An owner typed in lower case; a common noun's possessive is no owner.
        (
            "biontech's neoantigen vaccine",
            [("organisation", "BioNTech"), ("intervention", "neoantigen vaccine")],
        ),
        (
            "children's hospital admissions",
            [("population", "children"), ("topic", "hospital admissions")],
        ),
        # What a decision maker did is no part of the drug.
        (
            "Has NICE appraised tirzepatide?",
            [("organisation", "NICE"), ("intervention", "tirzepatide")],
        ),
        # A section of a law is one name.
        ("FDA 510(k) clearances", [("organisation", "FDA"), ("topic", "510k clearances")]),
        # An intervention head alone names a kind of intervention.
        (
            "interventions in nursing homes",
            [("aspect", "interventions"), ("place", "nursing homes")],
        ),
        # An organism offered as an alternative is used as a treatment.
        ("cleaner fish as an alternative", [("intervention", "cleaner fish")]),
    ],
)
def test_what_outsiders_typed_is_read_into_its_slots(
    message: str, kinds: list[tuple[str, str]]
) -> None:
    assert kinds_of(message) == kinds


def test_cues_outsiders_used() -> None:
    assert read_message("great, that's what I needed", TODAY).closing
    assert read_message("totally different: recycling of carbon fibre", TODAY).switches
    assert read_message("actually let's switch: exercise for falls", TODAY).switches
    assert read_message("do test strip programs show anything similar?", TODAY).refers_back
    assert read_message("cleaner fish as an alternative", TODAY).instead
    last_year = read_message("last year only", TODAY)
    assert (last_year.year_from, last_year.year_to) == (TODAY.year - 1, TODAY.year - 1)


def test_a_drug_asked_about_replaces_the_drug_in_play() -> None:
    steps = chain(
        "Has NICE appraised tirzepatide for weight management?",
        "what did they decide on semaglutide?",
    )
    assert "semaglutide" in steps[1][1].query() and "tirzepatide" not in steps[1][1].query()
    assert "NICE" in steps[1][1].query()


def test_a_value_said_not_to_be_wanted_is_dropped() -> None:
    steps = chain("GLP-1 agonists and dopamine in mice", "in rats specifically, not mice")
    query = steps[1][1].query()
    assert "rats" in query and "mice" not in query and "GLP-1" in query


def test_a_short_question_on_an_unnamed_treatment_follows_on() -> None:
    steps = chain(
        "impact of invasive lionfish on native reef fish in the caribbean",
        "how effective are culling programs",
    )
    assert steps[1][0] == "followup_continuation"
    assert "lionfish" in steps[1][1].query() and "culling" in steps[1][1].query()


def test_a_behaviour_a_drug_targets_replaces_the_condition() -> None:
    steps = chain("GLP-1 agonists and alcohol use disorder", "what about smoking cessation")
    query = steps[1][1].query()
    assert "GLP-1" in query and "smoking cessation" in query and "alcohol" not in query
    breastfeeding = chain("safety of SSRIs during pregnancy", "what about while breastfeeding")
    assert "pregnancy" not in breastfeeding[1][1].query()


def test_a_kind_of_the_intervention_in_play_qualifies_it() -> None:
    steps = chain(
        "R21 malaria vaccine rollout coverage in burkina faso", "seasonal vaccination schedules"
    )
    query = steps[1][1].query()
    assert "R21" in query and "seasonal vaccination" in query


def test_a_population_with_another_qualifier_replaces_its_words() -> None:
    steps = chain(
        "Does tutoring improve math outcomes in primary school?",
        "what about for secondary school students",
    )
    query = steps[1][1].query()
    assert "secondary school" in query and "primary" not in query and "tutoring" in query
    corals = chain(
        "coral bleaching recovery after marine heatwaves on the great barrier reef",
        "what about red sea corals",
    )
    assert "coral bleaching" in corals[1][1].query() and "barrier" not in corals[1][1].query()


def test_a_name_with_a_dot_stays_whole_in_a_corrected_query() -> None:
    assert content_words("NaV1.8 inhibitors and the B.1.1.7 variant.") == [
        "NaV1.8",
        "inhibitors",
        "B.1.1.7",
        "variant",
    ]


def test_change_after_a_word_of_its_phrase_is_a_noun() -> None:
    assert kinds_of("climate change and malaria transmission")[0] == ("topic", "climate change")
    assert kinds_of("predetermined change control plans") == [
        ("topic", "predetermined change control plans")
    ]
    assert kinds_of("did it change obesity in kids") == [
        ("condition", "obesity"),
        ("population", "kids"),
    ]


def test_a_species_with_its_genus_abbreviated_is_one_organism() -> None:
    assert kinds_of("E. coli infections in S. aureus") == [
        ("condition", "E.coli infections"),
        ("population", "S.aureus"),
    ]
    assert read_message("tell me more about the second one", TODAY).points_at_result
    assert not read_message("can you search for it", TODAY).points_at_result


def test_a_word_before_an_occupation_names_its_field_not_a_condition() -> None:
    assert ("population", "emergency nurses") in kinds_of("stress among emergency nurses")
    query = chain("compassion fatigue in oncology nurses", "and emergency physicians?")[1][1]
    assert "compassion fatigue" in query.query() and "emergency physicians" in query.query()
    assert "oncology" not in query.query()


def test_a_plural_mesh_reads_in_the_singular_gives_the_kind() -> None:
    # "fish" is MeSH's Fishes: an organism, which another organism replaces.
    query = chain("mercury levels in reef fish", "and crustaceans?")[1][1].query()
    assert "crustaceans" in query and "fish" not in query


def test_a_condition_inside_a_procedure_is_replaced_by_its_kin() -> None:
    query = chain(
        "mesh versus suture inguinal hernia repair recurrence",
        "what about umbilical hernias instead",
    )[1][1].query()
    assert "umbilical hernia" in query and "inguinal" not in query and "repair" in query


def test_both_brings_back_the_subject_just_replaced() -> None:
    steps = chain(
        "dupilumab for atopic dermatitis in adolescents",
        "tralokinumab instead",
        "conjunctivitis rates with both",
    )
    query = steps[2][1].query()
    assert "tralokinumab" in query and "dupilumab" in query and "conjunctivitis" in query
    # "both X and Y" names the two itself.
    named = chain(
        "dupilumab for atopic dermatitis", "tralokinumab instead", "both eczema and asthma"
    )
    assert "dupilumab" not in named[2][1].query()


def test_a_place_in_a_name_mesh_knows_is_no_place() -> None:
    assert ("place", "atlantic") not in kinds_of("sea lice in atlantic salmon farms")
    assert ("place", "mediterranean") not in kinds_of("mediterranean diet and dementia")
    assert ("place", "Norway") in kinds_of("sea lice on salmon farms in Norway")


def test_how_does_an_unknown_word_compare_is_the_other_side_not_an_aspect() -> None:
    steps = chain(
        "stroke outcomes of dabigatran in atrial fibrillation", "how does edoxaban compare?"
    )
    query = steps[1][1].query()
    assert "stroke" in query and "edoxaban" in query and "atrial fibrillation" in query


def test_what_about_a_thing_of_its_own_takes_the_subject_s_place() -> None:
    steps = chain("biochar amendments for soil carbon storage", "what about cover crops")
    query = steps[1][1].query()
    assert "cover crops" in query and "soil carbon storage" in query and "biochar" not in query
    # An aspect asked about is added to the subject, not put in its place.
    aspect = chain("biochar amendments for soil carbon storage", "what about the cost")
    assert "biochar" in aspect[1][1].query()


def test_a_verb_s_form_before_a_noun_is_its_modifier_not_a_verb() -> None:
    assert ("topic", "cover crops") in kinds_of("what about cover crops")
    assert "cover" not in read_message("does it cover children?", TODAY).text.split()[3:]
    assert all("cover" not in text for _, text in kinds_of("does it cover children?"))


def test_words_dropped_from_inside_a_value_are_swapped_in_place() -> None:
    steps = chain(
        "unconditional cash transfers and school attendance",
        "conditional ones rather than unconditional",
    )
    query = steps[1][1].query()
    assert "conditional cash transfers" in query and "unconditional" not in query
    assert query.count("conditional") == 1 and "school attendance" in query


def test_an_outcome_said_of_people_is_an_aspect_not_a_population() -> None:
    assert kinds_of("infant outcomes") == [("aspect", "infant outcomes")]
    steps = chain("antidepressants for depression while breastfeeding", "infant outcomes")
    query = steps[1][1].query()
    assert "breastfeeding" in query and "infant outcomes" in query


def test_a_company_typed_in_lower_case_is_an_organisation() -> None:
    assert ("organisation", "Novo Nordisk") in kinds_of("novo nordisk obesity pipeline")
    steps = chain("astrazeneca oncology pipeline", "and merck's?")
    query = steps[1][1].query()
    assert "Merck" in query and "AstraZeneca" not in query and "oncology" in query


def test_survivors_are_named_by_what_they_survived() -> None:
    assert kinds_of("stroke survivors") == [("population", "stroke survivors")]
    steps = chain("exercise for cancer-related fatigue", "in colorectal cancer survivors")
    query = steps[1][1].query()
    assert "fatigue" in query and "colorectal cancer survivors" in query


def test_forgetting_a_subject_makes_the_new_words_the_subject() -> None:
    steps = chain(
        "viral vectors for gene delivery to the retina",
        "forget vectors - electroporation in mice?",
        "efficiency",
    )
    query = steps[2][1].query()
    assert "electroporation" in query and "efficiency" in query and "vector" not in query


def test_other_people_keep_the_condition_the_topic_is_about() -> None:
    steps = chain(
        "metformin and all-cause mortality in adults with type 2 diabetes", "in children?"
    )
    query = steps[1][1].query()
    assert "children" in query and "type 2 diabetes" in query and "adults" not in query
