"""Screening simulation: our relevance-feedback model against ASReview's default model.

Reads ASReview-format CSVs (``title``, ``abstract``, ``label_included``), e.g. the Cohen
2006 drug-class reviews. For each data set and seed both systems start from the same two
judged records (one relevant, one irrelevant, drawn with the seed); then the model ranks
the unjudged records, the oracle labels the top one (a batch of one, as ASReview does),
the model is refitted, and so on until every relevant record is found. The records
left over count as screened last, in data-set order.

ASReview runs in the same process through its Python API (``asreview.Simulate`` with
the cycles its ``simulate`` command builds: top-down until both classes are labelled,
then its default model). It is a benchmark-only dependency, not a project one.

    python bench/screening.py [--data FILE.csv ...] [--seeds 3] [--no-meaning] [--json OUT.json]

Ours reads the titles' meaning too, as a screening project does: the titles are embedded
once per data set with the model that ships (as the library stores a record's vector
once), and that time is counted in ours. ``--no-meaning`` leaves the view out.

Both systems' figures come from the same code; ``DEFINITIONS`` says what they mean.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import functools
import importlib
import json
import math
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import numpy.typing as npt

from scholarstream.embeddings import shipped_embedder
from scholarstream.papers.ranking import title_meaning
from scholarstream.search.scoring import FeedbackModel

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "screening" / "Cohen_2006"
ASREVIEW_INSTALL = (
    ".venv/bin/pip install --no-deps asreview==3.0.8 && .venv/bin/pip install "
    "'pandas>=2.2,<3' tqdm filelock jsonschema synergy_dataset datahugger"
)
# asreview 3 pins rispy~=0.9 while ScholarStream needs rispy>=0.10 (the RIS format code);
# rispy is only used by asreview's RIS reader, which the benchmark does not touch.

DEFINITIONS = """\
WSS@95     = (TN + FN) / N - 0.05 at the point 95% of the relevant records are found,
             i.e. the share of records not yet screened then, minus 0.05.
recall@10% = share of the relevant records found after screening 10% of the records.
(The two prior records count as screened.)"""

Labels = npt.NDArray[np.int64]
Simulation = Callable[["Dataset", list[int]], list[int]]


@dataclass(frozen=True)
class Dataset:
    name: str
    titles: list[str]
    abstracts: list[str]
    labels: Labels

    @property
    def texts(self) -> list[str]:
        # The same input ASReview's TF-IDF reads: title and abstract.
        return [f"{t}\n{a}" for t, a in zip(self.titles, self.abstracts, strict=True)]


def read_dataset(path: Path) -> Dataset:
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    return Dataset(
        name=path.stem,
        titles=[row.get("title") or "" for row in rows],
        abstracts=[row.get("abstract") or "" for row in rows],
        labels=np.array([int(float(row["label_included"] or 0)) for row in rows], dtype=np.int64),
    )


def draw_priors(labels: Labels, seed: int) -> list[int]:
    """One relevant and one irrelevant record, drawn with ``seed``."""
    rng = np.random.default_rng(seed)
    relevant = int(rng.choice(np.flatnonzero(labels == 1)))
    irrelevant = int(rng.choice(np.flatnonzero(labels == 0)))
    return [relevant, irrelevant]


@dataclass(frozen=True)
class Metrics:
    wss_at_95: float
    recall_at_10: float


def evaluate(order: Sequence[int], labels: Labels) -> Metrics:
    """``order``: record indices in screening order (records never screened appended)."""
    n = len(labels)
    found = np.cumsum(labels[np.asarray(order)])
    relevant = int(labels.sum())
    screened_at_95 = int(np.argmax(found >= math.ceil(0.95 * relevant))) + 1
    screened_at_10 = math.ceil(0.10 * n)
    return Metrics(
        wss_at_95=(n - screened_at_95) / n - 0.05,
        recall_at_10=float(found[screened_at_10 - 1]) / relevant,
    )


def complete(order: Sequence[int], n: int) -> list[int]:
    seen = set(order)
    return [*order, *(i for i in range(n) if i not in seen)]


def simulate_ours(
    data: Dataset,
    priors: list[int],
    *,
    retrain_every: int = 1,
    meaning: npt.NDArray[np.float32] | None = None,
) -> list[int]:
    """Refits after every label (``retrain_every`` > 1: after that many labels, once 50
    records are screened; the top of one ranking is screened in between); ``meaning``:
    the titles' embeddings."""
    labels = data.labels
    model = FeedbackModel(data.texts, meaning=meaning)
    judged = {i: bool(labels[i]) for i in priors}
    order = list(priors)
    pool = np.ones(len(labels), dtype=np.bool_)
    pool[priors] = False
    total, found = int(labels.sum()), int(labels[priors].sum())
    while found < total and pool.any():
        model.fit(judged)
        batch = 1 if len(order) < 50 else retrain_every
        for index in model.rank(np.flatnonzero(pool).tolist())[:batch]:
            judged[index] = bool(labels[index])
            order.append(index)
            pool[index] = False
            found += int(labels[index])
    return complete(order, len(labels))


@contextlib.contextmanager
def _in_directory(path: str) -> Iterator[None]:
    previous = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(previous)


def load_asreview() -> ModuleType | None:
    """asreview, or ``None`` when it is not installed."""
    # Importing asreview installs a global requests-cache that writes synergy_cache.sqlite
    # into the working directory: import it elsewhere, then undo the cache.
    with tempfile.TemporaryDirectory() as scratch, _in_directory(scratch):
        try:
            asreview = importlib.import_module("asreview")
        except ImportError:
            return None
        with contextlib.suppress(ImportError):
            importlib.import_module("requests_cache").uninstall_cache()
    return asreview


def asreview_default_model(asreview: ModuleType) -> str:
    models = importlib.import_module("asreview.models.models")
    config: dict[str, Any] = models.get_ai_config()
    value = config["value"]
    return (
        f"{config['label']} ({value.feature_extractor} {value.feature_extractor_param}, "
        f"{value.classifier} {value.classifier_param}, {value.balancer} "
        f"{value.balancer_param}, query {value.querier})"
    )


def asreview_simulation(asreview: ModuleType) -> Simulation:
    pandas = importlib.import_module("pandas")
    models = importlib.import_module("asreview.models.models")
    queriers = importlib.import_module("asreview.models.queriers")
    stoppers = importlib.import_module("asreview.models.stoppers")

    def simulate(data: Dataset, priors: list[int]) -> list[int]:
        # Its SVM takes no random_state: seed the global generator, as its CLI's --seed
        # does, so that runs repeat.
        np.random.seed(0)
        frame = pandas.DataFrame({"title": data.titles, "abstract": data.abstracts})
        # The cycles ``asreview simulate`` builds; its default stopper ends the run when
        # the last relevant record is found.
        cycles = [
            asreview.ActiveLearningCycle(querier=queriers.TopDown(), stopper=stoppers.IsFittable()),
            asreview.ActiveLearningCycle.from_meta(models.get_ai_config()["value"]),
        ]
        sim = asreview.Simulate(frame, data.labels, cycles, print_progress=False)
        sim.label(priors)
        sim.review()
        return complete([int(i) for i in sim._results["record_id"]], len(data.labels))

    return simulate


@dataclass
class SystemResult:
    wss_at_95: float
    recall_at_10: float
    seconds: float
    per_seed: list[Metrics] = field(default_factory=list)


@dataclass
class DatasetResult:
    dataset: str
    records: int
    relevant: int
    ours: SystemResult
    asreview: SystemResult | None


def run_system(simulate: Simulation, data: Dataset, seeds: Sequence[int]) -> SystemResult:
    started = time.perf_counter()
    per_seed = [evaluate(simulate(data, draw_priors(data.labels, s)), data.labels) for s in seeds]
    return SystemResult(
        wss_at_95=statistics.fmean(m.wss_at_95 for m in per_seed),
        recall_at_10=statistics.fmean(m.recall_at_10 for m in per_seed),
        seconds=time.perf_counter() - started,
        per_seed=per_seed,
    )


def _figures(result: SystemResult | None) -> str:
    if result is None:
        return f"{'-':>7} {'-':>7} {'-':>7}"
    return f"{result.wss_at_95:7.3f} {result.recall_at_10:7.3f} {result.seconds:7.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, nargs="+", help="ASReview-format CSVs (default: all of Cohen 2006)"
    )
    parser.add_argument("--seeds", type=int, default=3, help="prior draws per data set")
    parser.add_argument(
        "--retrain-every", type=int, default=1, help="our refits: every k labels after 50"
    )
    parser.add_argument("--no-asreview", action="store_true", help="our figures only")
    parser.add_argument(
        "--no-meaning", action="store_true", help="ours without the titles' meaning"
    )
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    files: list[Path] = args.data or sorted(DEFAULT_DATA.glob("*.csv"))
    seeds = list(range(args.seeds))

    asreview = None if args.no_asreview else load_asreview()
    print(DEFINITIONS)
    if asreview is not None:
        print(f"ASReview {asreview.__version__}, default model: {asreview_default_model(asreview)}")
    elif not args.no_asreview:
        print(
            "asreview is not installed: only our figures follow. To compare, install it "
            f"into this environment:\n  {ASREVIEW_INSTALL}"
        )
    print(
        f"seeds: {len(seeds)}, batch of 1, our refit every {args.retrain_every} after 50, "
        f"titles' meaning {'off' if args.no_meaning else 'on (embedding time counted in ours)'}\n"
    )
    header = f"{'data set':20} {'N':>5} {'rel':>4}   {'ours: WSS@95 R@10% s':>23}"
    print(f"{header}   {'ASReview: WSS@95 R@10% s':>27}")

    results: list[DatasetResult] = []
    embedding_total = 0.0
    for path in files:
        data = read_dataset(path)
        started = time.perf_counter()
        meaning = (
            None
            if args.no_meaning
            else title_meaning(data.titles, shipped_embedder().embed_documents)
        )
        embedding = time.perf_counter() - started
        simulate = functools.partial(
            simulate_ours, retrain_every=args.retrain_every, meaning=meaning
        )
        ours = run_system(simulate, data, seeds)
        ours.seconds += embedding
        embedding_total += embedding
        theirs = run_system(asreview_simulation(asreview), data, seeds) if asreview else None
        results.append(
            DatasetResult(data.name, len(data.labels), int(data.labels.sum()), ours, theirs)
        )
        print(
            f"{data.name:20} {len(data.labels):5d} {int(data.labels.sum()):4d}   "
            f"{_figures(ours)}      {_figures(theirs)}",
            flush=True,
        )

    ours_wss = statistics.fmean(r.ours.wss_at_95 for r in results)
    ours_recall = statistics.fmean(r.ours.recall_at_10 for r in results)
    print(f"\n{'average':31} {ours_wss:7.3f} {ours_recall:7.3f}", end="")
    summary: dict[str, Any] = {"ours": {"wss_at_95": ours_wss, "recall_at_10": ours_recall}}
    compared = [r.asreview for r in results if r.asreview is not None]
    if compared:
        their_wss = statistics.fmean(r.wss_at_95 for r in compared)
        their_recall = statistics.fmean(r.recall_at_10 for r in compared)
        pairs = [(r.ours, r.asreview) for r in results if r.asreview is not None]
        worst = min(o.wss_at_95 - t.wss_at_95 for o, t in pairs)
        ours_seconds = sum(o.seconds for o, _ in pairs)
        their_seconds = sum(t.seconds for _, t in pairs)
        checks = {
            "average WSS@95 >= ASReview's + 0.05": ours_wss >= their_wss + 0.05,
            "no set more than 0.02 below ASReview's": worst >= -0.02,
            "time at most ASReview's": ours_seconds <= their_seconds,
        }
        met = all(checks.values())
        print(f" {'':7}      {their_wss:7.3f} {their_recall:7.3f}")
        print(
            f"WSS@95 difference: average {ours_wss - their_wss:+.3f}, worst set {worst:+.3f}; "
            f"seconds: ours {ours_seconds:.1f} (embedding the titles {embedding_total:.1f}), "
            f"ASReview {their_seconds:.1f}"
        )
        for name, held in checks.items():
            print(f"target {name}: {'met' if held else 'NOT met'}")
        summary["asreview"] = {"wss_at_95": their_wss, "recall_at_10": their_recall}
        summary["targets"] = checks
        summary["target_met"] = met
    else:
        print()
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "seeds": len(seeds),
            "retrain_every": args.retrain_every,
            "asreview_version": asreview.__version__ if asreview else None,
            "asreview_model": asreview_default_model(asreview) if asreview else None,
            "datasets": [asdict(r) for r in results],
            "average": summary,
        }
        args.json.write_text(json.dumps(payload, indent=2))


if __name__ == "__main__":
    main()
