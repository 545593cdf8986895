"""Paper search with human checkpoints (seed 003).

``SearchWorkflow`` runs parse -> build -> [strategy checkpoint] -> search -> dedup -> score
-> organize -> [result review], iterating on the user's feedback. Each of its six skills
has a deterministic implementation (offline mode) and an LLM one; ``SearchWorkflow.
from_config`` picks them for a user. ``search.durable`` runs it as a DBOS workflow for the
API; the CLI runs it in process with a terminal checkpoint handler.
"""

from scholarstream.papers.dedup import RecordDeduplicator
from scholarstream.papers.keys import paper_key
from scholarstream.search.adjudicate import LLMPairAdjudicator
from scholarstream.search.assembly import SearchOptions, build_skills
from scholarstream.search.core.checkpoints import (
    Checkpoint,
    CheckpointHandler,
    CheckpointKind,
    Decision,
    DecisionAction,
    ResultPayload,
    StrategyPayload,
    validate_decision,
)
from scholarstream.search.core.models import (
    CollectionStats,
    Concept,
    ConceptBlock,
    Grouping,
    LabelledPaper,
    PaperCollection,
    PaperGroup,
    ParsedIntent,
    PicoElements,
    QueryBuilderInput,
    ScoredPaper,
    SearchResults,
    SearchStrategy,
    SourceQuery,
    UserFeedback,
)
from scholarstream.search.core.skills import (
    Deduplicator,
    IntentParser,
    QueryBuilder,
    RelevanceScorer,
    ResultOrganizer,
    Searcher,
)
from scholarstream.search.core.state import IterationRecord, WorkflowState
from scholarstream.search.intent import LLMIntentParser, RuleIntentParser
from scholarstream.search.llm import GatewaySkillLLM, ModelSkillLLM, SkillLLM
from scholarstream.search.mesh import MeshVocabulary
from scholarstream.search.organize import LLMResultOrganizer, RuleResultOrganizer
from scholarstream.search.query import LLMQueryBuilder, RuleQueryBuilder
from scholarstream.search.scoring import LexicalRelevanceScorer, LLMRelevanceScorer
from scholarstream.search.searcher import SourceSearcher
from scholarstream.search.workflow import SearchWorkflow, Stage, StageObserver

__all__ = [
    "Checkpoint",
    "CheckpointHandler",
    "CheckpointKind",
    "CollectionStats",
    "Concept",
    "ConceptBlock",
    "Decision",
    "DecisionAction",
    "Deduplicator",
    "GatewaySkillLLM",
    "Grouping",
    "IntentParser",
    "IterationRecord",
    "LLMIntentParser",
    "LLMPairAdjudicator",
    "LLMQueryBuilder",
    "LLMRelevanceScorer",
    "LLMResultOrganizer",
    "LabelledPaper",
    "LexicalRelevanceScorer",
    "MeshVocabulary",
    "ModelSkillLLM",
    "PaperCollection",
    "PaperGroup",
    "ParsedIntent",
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
    "SearchResults",
    "SearchStrategy",
    "SearchWorkflow",
    "Searcher",
    "SkillLLM",
    "SourceQuery",
    "SourceSearcher",
    "Stage",
    "StageObserver",
    "StrategyPayload",
    "UserFeedback",
    "WorkflowState",
    "build_skills",
    "paper_key",
    "validate_decision",
]
