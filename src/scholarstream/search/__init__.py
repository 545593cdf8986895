"""Paper search with human checkpoints (seed 003).

``SearchWorkflow`` runs parse -> build -> [strategy checkpoint] -> search -> dedup -> score
-> organize -> [result review], iterating on the user's feedback. Each of its six skills
has a deterministic implementation (offline mode) and an LLM one; ``SearchWorkflow.
from_config`` picks them for a user. ``search.durable`` runs it as a DBOS workflow for the
API; the CLI runs it in process with a terminal checkpoint handler.
"""

from scholarstream.papers import paper_key
from scholarstream.papers.dedup import RecordDeduplicator
from scholarstream.search._adjudicate import LLMPairAdjudicator
from scholarstream.search._assembly import (
    SearchOptions,
    SearchServices,
    build_skills,
    check_sources,
    library_embedder,
    offline_scorer,
)
from scholarstream.search._durable import cancel_search_run, deliver_decision, start_search_run
from scholarstream.search._fallbacks import FALLBACK_ERRORS, FallbackLog, fallback_reason
from scholarstream.search._llm import GatewaySkillLLM, KnowsCapabilities, ModelSkillLLM, SkillLLM
from scholarstream.search._mesh import MeshVocabulary
from scholarstream.search._preview import StrategyPreview, preview_strategy
from scholarstream.search._run_store import SearchRunStore, workflow_id_for
from scholarstream.search._runs import PendingCheckpoint, SearchRequest, SearchRun, SearchRunSummary
from scholarstream.search._searcher import SourceSearcher
from scholarstream.search._workflow import SearchWorkflow, Stage, StageObserver
from scholarstream.search.core import (
    Checkpoint,
    CheckpointHandler,
    CheckpointKind,
    CollectionStats,
    Concept,
    ConceptBlock,
    Decision,
    DecisionAction,
    Deduplicator,
    FallbackReason,
    Grouping,
    IntentParser,
    IterationRecord,
    LabelledPaper,
    ModelFallback,
    PaperCollection,
    PaperGroup,
    ParsedIntent,
    PicoElements,
    QueryBuilder,
    QueryBuilderInput,
    RelevanceScorer,
    ResultOrganizer,
    ResultPayload,
    ScoredPaper,
    Searcher,
    SearchResults,
    SearchStrategy,
    SourceQuery,
    StrategyPayload,
    UserFeedback,
    WorkflowState,
    validate_decision,
)
from scholarstream.search.intent import LLMIntentParser, RuleIntentParser
from scholarstream.search.organize import LLMResultOrganizer, RuleResultOrganizer
from scholarstream.search.query import LLMQueryBuilder, RuleQueryBuilder
from scholarstream.search.scoring import LexicalRelevanceScorer, LLMRelevanceScorer

__all__ = [
    "FALLBACK_ERRORS",
    "Checkpoint",
    "CheckpointHandler",
    "CheckpointKind",
    "CollectionStats",
    "Concept",
    "ConceptBlock",
    "Decision",
    "DecisionAction",
    "Deduplicator",
    "FallbackLog",
    "FallbackReason",
    "GatewaySkillLLM",
    "Grouping",
    "IntentParser",
    "IterationRecord",
    "KnowsCapabilities",
    "LLMIntentParser",
    "LLMPairAdjudicator",
    "LLMQueryBuilder",
    "LLMRelevanceScorer",
    "LLMResultOrganizer",
    "LabelledPaper",
    "LexicalRelevanceScorer",
    "MeshVocabulary",
    "ModelFallback",
    "ModelSkillLLM",
    "PaperCollection",
    "PaperGroup",
    "ParsedIntent",
    "PendingCheckpoint",
    "PicoElements",
    "QueryBuilder",
    "QueryBuilderInput",
    "RecordDeduplicator",
    "RelevanceScorer",
    "ResultOrganizer",
    "ResultPayload",
    "RuleIntentParser",
    "RuleQueryBuilder",
    "RuleResultOrganizer",
    "ScoredPaper",
    "SearchOptions",
    "SearchRequest",
    "SearchResults",
    "SearchRun",
    "SearchRunStore",
    "SearchRunSummary",
    "SearchServices",
    "SearchStrategy",
    "SearchWorkflow",
    "Searcher",
    "SkillLLM",
    "SourceQuery",
    "SourceSearcher",
    "Stage",
    "StageObserver",
    "StrategyPayload",
    "StrategyPreview",
    "UserFeedback",
    "WorkflowState",
    "build_skills",
    "cancel_search_run",
    "check_sources",
    "deliver_decision",
    "fallback_reason",
    "library_embedder",
    "offline_scorer",
    "paper_key",
    "preview_strategy",
    "start_search_run",
    "validate_decision",
    "workflow_id_for",
]
