"""The evidence phase on its own (issue 24): the evidence pack for a question and what
was searched to build it. Works with no model configured and with sources unreachable
(the library still answers)."""

from __future__ import annotations

from fastapi import APIRouter

from scholarstream.api._deps import ReleasedUser, RuntimeDep
from scholarstream.grounding.evidence import EvidenceFinder, EvidenceRequest, EvidenceResult

router = APIRouter(prefix="/evidence", tags=["evidence"])


@router.post("", response_model=EvidenceResult)
async def find_evidence(
    request: EvidenceRequest, runtime: RuntimeDep, user: ReleasedUser
) -> EvidenceResult:
    """Turns the question into queries, searches the library and the sources, merges
    duplicates, ranks every work for the question and returns the best as the pack (keys
    1..n), with the queries and how each source fared: a source that failed is listed
    with its error and hint, and the others' records still make the pack."""
    return await EvidenceFinder.for_runtime(runtime).find(user.id, request)
