"""Records a Zotero user exports twice (RIS, then BibTeX) and a screening tool's
spreadsheet sharing their DOIs: copies of one work written the ways real exports write them.
The trials are real; the files are written here."""

# Four trials as a Zotero user exports them: RIS first (DOI, no PMID), then BibTeX (PMID,
# fuller abstract, no DOI on two of them, titles in another case), then a spreadsheet.
RIS = """TY  - JOUR
AU  - Zinman, Bernard
AU  - Wanner, Christoph
AU  - Lachin, John M.
TI  - Empagliflozin, Cardiovascular Outcomes, and Mortality in Type 2 Diabetes
T2  - New England Journal of Medicine
PY  - 2015
VL  - 373
IS  - 22
SP  - 2117
EP  - 2128
DO  - 10.1056/NEJMoa1504720
AB  - The effects of empagliflozin on cardiovascular morbidity and mortality are unknown.
ER  -

TY  - JOUR
AU  - McMurray, John J. V.
AU  - Solomon, Scott D.
AU  - Inzucchi, Silvio E.
TI  - Dapagliflozin in Patients with Heart Failure and Reduced Ejection Fraction
T2  - New England Journal of Medicine
PY  - 2019
VL  - 381
IS  - 21
SP  - 1995
EP  - 2008
DO  - 10.1056/NEJMoa1911303
ER  -

TY  - JOUR
AU  - Neal, Bruce
AU  - Perkovic, Vlado
AU  - Mahaffey, Kenneth W.
TI  - Canagliflozin and Cardiovascular and Renal Events in Type 2 Diabetes
T2  - New England Journal of Medicine
PY  - 2017
VL  - 377
IS  - 7
SP  - 644
EP  - 657
DO  - 10.1056/NEJMoa1611925
ER  -

TY  - JOUR
AU  - Marso, Steven P.
AU  - Daniels, Gilbert H.
AU  - Brown-Frandsen, Kirstine
TI  - Liraglutide and Cardiovascular Outcomes in Type 2 Diabetes
T2  - New England Journal of Medicine
PY  - 2016
VL  - 375
IS  - 4
SP  - 311
EP  - 322
DO  - 10.1056/NEJMoa1603827
ER  -
"""

BIBTEX = r"""
@article{zinman2015,
  author = {Zinman, Bernard and Wanner, Christoph and Lachin, John M. and Fitchett, David},
  title = {Empagliflozin, cardiovascular outcomes, and mortality in type 2 diabetes},
  journal = {N Engl J Med},
  year = {2015},
  volume = {373},
  number = {22},
  pages = {2117--2128},
  pmid = {26378978},
  abstract = {Background: The effects of empagliflozin, an inhibitor of sodium-glucose
    cotransporter 2, in addition to standard care, on cardiovascular morbidity and mortality in
    patients with type 2 diabetes at high cardiovascular risk are not known.},
}
@article{mcmurray2019,
  author = {McMurray, John J. V. and Solomon, Scott D. and Inzucchi, Silvio E.},
  title = {Dapagliflozin in patients with heart failure and reduced ejection fraction},
  journal = {N Engl J Med},
  year = {2019},
  volume = {381},
  number = {21},
  pages = {1995--2008},
  pmid = {31535829},
}
@article{neal2017,
  author = {Neal, Bruce and Perkovic, Vlado and Mahaffey, Kenneth W.},
  title = {Canagliflozin and Cardiovascular and Renal Events in Type 2 Diabetes},
  journal = {New England Journal of Medicine},
  year = {2017},
  volume = {377},
  pages = {644--657},
  doi = {10.1056/NEJMoa1611925},
  pmid = {28605608},
}
@article{marso2016,
  author = {Marso, Steven P. and Daniels, Gilbert H. and Brown-Frandsen, Kirstine},
  title = {Liraglutide and Cardiovascular Outcomes in Type 2 Diabetes},
  journal = {New England Journal of Medicine},
  year = {2016},
  volume = {375},
  pages = {311--322},
  doi = {https://doi.org/10.1056/nejmoa1603827},
}
"""

CSV = """Title,Authors,Publication Year,Journal,Volume,Pages,DOI
Empagliflozin Cardiovascular Outcomes and Mortality in Type 2 Diabetes,Zinman B; Wanner C,2015,N Engl J Med,373,2117-28,10.1056/NEJMOA1504720
Canagliflozin and cardiovascular and renal events in type 2 diabetes,Neal B; Perkovic V,2017,N Engl J Med,377,644-57,doi:10.1056/NEJMoa1611925
Semaglutide and Cardiovascular Outcomes in Patients with Type 2 Diabetes,Marso SP; Bain SC,2016,N Engl J Med,375,1834-44,10.1056/NEJMoa1607141
"""  # noqa: E501
