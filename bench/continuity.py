"""Follow-up continuity: do the queries a conversation's turns send carry the prior topic
on follow-ups and drop it on topic switches?

Runs each conversation of --cases (JSON Lines: {"id", "turns": [{"user", "kind",
"expect_query_contains", "expect_query_excludes"}]}) through the continuity engine
(``scholarstream.chat.continuity.engine``: classification, planning, the blueprint's
``reframe_for_retrieval``), as offline mode does, and checks the queries of each turn.
NOTE: the engine is not yet wired into chat turns (issue 6 is open); this measures the
engine's queries, not yet the tools' calls of a full chat turn.

    python bench/continuity.py [--cases bench/data/continuity_cases.jsonl]

A turn passes when every expect_query_contains string is in at least one of its queries
(case-insensitive) and no expect_query_excludes string is in any; a turn with neither is
not scored. Follow-up carry = passing share of scored followup/slot_fill turns; switch
drop = passing share of scored switch turns."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from scholarstream.chat.continuity.engine import begin_turn, finish_turn
from scholarstream.chat.continuity.state import QuerySent, ThreadState

DEFAULT_CASES = Path(__file__).parent / "data" / "continuity_cases.jsonl"


def run_case(case: dict[str, Any]) -> list[dict[str, Any]]:
    state = ThreadState()
    outcomes = []
    for turn in case["turns"]:
        continuity = begin_turn(state, turn["user"])
        queries = [step.query for step in continuity.steps]
        continuity.queries = [
            QuerySent(tool=step.tool or step.route, query=step.query, results=1)
            for step in continuity.steps
        ]
        finish_turn(state, continuity, turn["user"], "(answer)")
        contains = [s.lower() for s in turn.get("expect_query_contains", [])]
        excludes = [s.lower() for s in turn.get("expect_query_excludes", [])]
        scored = bool(contains or excludes)
        lowered = [q.lower() for q in queries]
        passed = all(any(c in q for q in lowered) for c in contains) and not any(
            e in q for e in excludes for q in lowered
        )
        outcomes.append(
            {
                "id": case["id"],
                "user": turn["user"],
                "kind": turn.get("kind", ""),
                "intent": continuity.classification.intent,
                "scored": scored,
                "passed": passed,
                "queries": queries,
            }
        )
    return outcomes


def share(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "-"
    return f"{100 * sum(r['passed'] for r in rows) / len(rows):.1f}% ({len(rows)} turns)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=Path, default=DEFAULT_CASES)
    args = parser.parse_args()
    cases = [json.loads(line) for line in args.cases.read_text().splitlines() if line.strip()]
    turns = [o for case in cases for o in run_case(case)]
    scored = [t for t in turns if t["scored"]]
    followups = [t for t in scored if t["kind"] in ("followup", "slot_fill")]
    switches = [t for t in scored if t["kind"] == "switch"]
    print(f"{len(cases)} conversations, {len(turns)} turns, {len(scored)} scored (offline)")
    print(f"scored turns passing:           {share(scored)}")
    print(f"follow-ups carrying the topic:  {share(followups)}")
    print(f"topic switches dropping it:     {share(switches)}")
    failed = [t for t in scored if not t["passed"]]
    if failed:
        print("\nfailed turns:")
        for t in failed:
            print(f"  {t['id']} [{t['kind']}/{t['intent']}] {t['user']!r} -> {t['queries']}")


if __name__ == "__main__":
    main()
