"""The guide without a model: it walks the same steps by rule. It asks for each missing
field in the seed's order, offers the choices of ``stream_type`` and ``report_frequency``
as suggestions, and draws the other suggestions from a reading of what the user typed
(``_reading``: the aim, the organisations, the topics).

What the user's words already say is not asked again: text that answers the purpose (the
first message, or an answer at the purpose step) also fills the focus areas with its
topics and the organisations with those it names, when they are empty; a first message
that states an aim ("I want to follow ...") is the purpose itself. When the purpose is
asked, the suggestions are different aims for the subject the user named.

It stays on the current step until its field is answered (an edit of another field
does not move it on). Typed text answers the current step's field, unless the user edited
that field in the panel with the same message (the edit is the answer). ``<field>: <value>``
(or "change the <field> to <value>") sets any field from any step, as Scenario C of the
seed does with a model. In review, "yes" / "create" / "confirm" creates the stream. Its
messages name fields by their labels and choices by theirs, never by stored names.
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass, field

from scholarstream.errors import InvalidInputError
from scholarstream.streams.core._actions import TextInput
from scholarstream.streams.core._answer import GuideAnswer, GuideMode
from scholarstream.streams.core._config import PartialStreamConfig, StreamType
from scholarstream.streams.core._events import GuideTextDelta
from scholarstream.streams.core._fields import (
    FieldKind,
    FieldSpec,
    FieldValue,
    apply_values,
    field_spec,
    field_specs,
    parse_field_value,
)
from scholarstream.streams.core._guide import GuideRequest, GuideStreamItem
from scholarstream.streams.core._reading import Reading, read_text
from scholarstream.streams.core._terms import joined, name_ideas, purpose_ideas
from scholarstream.streams.core._workflow import (
    DATA_STEPS,
    STEP_TO_FIELD_MAPPING,
    WorkflowStep,
    all_required_complete,
    completed_steps,
    is_data_step,
)

MAX_CHIPS = 8
MAX_GOALS = 6
_ALL = frozenset(StreamType)
GOALS: tuple[tuple[str, frozenset[StreamType]], ...] = (
    (
        "Keep up with new findings in my field",
        frozenset({StreamType.SCIENTIFIC, StreamType.CLINICAL, StreamType.MIXED}),
    ),
    (
        "Find evidence for a review, a grant or a guideline",
        frozenset({StreamType.SCIENTIFIC, StreamType.CLINICAL, StreamType.REGULATORY}),
    ),
    ("Spot new methods, tools or datasets", frozenset({StreamType.SCIENTIFIC})),
    (
        "Follow what other groups and companies are doing",
        frozenset({StreamType.COMPETITIVE, StreamType.MARKET}),
    ),
    (
        "Inform the design of my own studies",
        frozenset({StreamType.CLINICAL, StreamType.SCIENTIFIC}),
    ),
    ("Watch for regulatory or policy changes", frozenset({StreamType.REGULATORY})),
    ("Find collaborators or partners", frozenset({StreamType.COMPETITIVE, StreamType.SCIENTIFIC})),
    (
        "Track competing products and pipelines",
        frozenset({StreamType.COMPETITIVE, StreamType.MARKET}),
    ),
)
"""Goals for academic and industry researchers alike, with the stream types they suit."""
EXPECTED_OUTCOMES: tuple[tuple[str, frozenset[StreamType]], ...] = (
    ("A short digest of what is new, to read each time", _ALL),
    (
        "New references for a review or a paper in progress",
        frozenset({StreamType.SCIENTIFIC, StreamType.CLINICAL, StreamType.REGULATORY}),
    ),
    (
        "Early warning of work that overlaps or competes with mine",
        frozenset({StreamType.SCIENTIFIC, StreamType.COMPETITIVE}),
    ),
    (
        "Input for decisions on projects or programmes",
        frozenset({StreamType.COMPETITIVE, StreamType.MARKET, StreamType.CLINICAL}),
    ),
    ("Briefings for my team or lab", _ALL),
)
_TYPE_CUES: dict[StreamType, tuple[str, ...]] = {
    StreamType.COMPETITIVE: ("competit", "rival", "company", "companies", "pipeline"),
    StreamType.REGULATORY: ("regulat", "fda", "ema", "approval", "guidance", "complian", "polic"),
    StreamType.CLINICAL: ("clinical", "trial", "patient", "efficacy", "safety", "therap"),
    StreamType.MARKET: ("market", "pricing", "sales", "commercial", "launch"),
    StreamType.SCIENTIFIC: (
        "mechanism",
        "science",
        "scientific",
        "biology",
        "discovery",
        "studying",
        "research",
        "method",
        "theory",
    ),
}
_TYPE_ORDER = (
    StreamType.SCIENTIFIC,
    StreamType.CLINICAL,
    StreamType.COMPETITIVE,
    StreamType.REGULATORY,
    StreamType.MARKET,
    StreamType.MIXED,
)
"""The order of the types the text gives no hint about: research first."""
_CHOICE_ALIASES = {
    "bi-weekly": "biweekly",
    "fortnightly": "biweekly",
    "every two weeks": "biweekly",
    "every other week": "biweekly",
    "every day": "daily",
    "every week": "weekly",
    "every month": "monthly",
}
_CONFIRM = re.compile(
    r"^\s*(yes|yep|y|ok|okay|sure|confirm(ed)?|create( it| the stream)?|looks good|lgtm|"
    r"go( ahead)?|do it)\b",
    re.IGNORECASE,
)
PREFILLED = ("purpose", "focus_areas", "competitors", "report_frequency")
_ABOUT_STEPS = (WorkflowStep.EXPLORATION, WorkflowStep.PURPOSE)
"""Where what the user types is about the subject (not an answer to another question)."""
"""The fields text that answers the purpose may fill at once, when they are empty."""


@dataclass
class _Reply:
    message: list[str] = field(default_factory=list)
    extracted: dict[str, FieldValue] = field(default_factory=dict)
    next_step: WorkflowStep | None = None
    target_field: str | None = None
    suggestions: list[str] = field(default_factory=list)
    options: list[str] = field(default_factory=list)
    proposed_message: str | None = None

    def answer(self) -> GuideAnswer:
        chips = bool(self.suggestions or self.options)
        return GuideAnswer(
            mode=GuideMode.SUGGESTION if chips else GuideMode.QUESTION,
            message=re.sub(r"\n\n +", "\n\n", " ".join(self.message)).strip(),
            target_field=self.target_field if chips else None,
            extracted_data=dict(self.extracted),
            suggestions=self.suggestions,
            options=self.options,
            proposed_message=self.proposed_message,
            next_step=self.next_step.value if self.next_step else None,
        )


class RuleGuide:
    async def respond(self, request: GuideRequest) -> AsyncGenerator[GuideStreamItem, None]:
        answer = self.answer(request)
        for word in re.findall(r"\S+\s*", answer.message):
            yield GuideTextDelta(text=word)
        yield answer

    def answer(self, request: GuideRequest) -> GuideAnswer:
        reply = _Reply()
        _read_text(request, reply)
        config = apply_values(request.config, reply.extracted)
        done = completed_steps(config, request.skipped_steps)
        if request.current_step is WorkflowStep.REVIEW:
            _review_turn(request, config, reply)
            return reply.answer()
        missing = next((s for s in DATA_STEPS if s not in done), None)
        if is_data_step(request.current_step) and request.current_step not in done:
            missing = request.current_step  # back to where we were, after an edit
        if missing is None:
            reply.next_step = WorkflowStep.REVIEW
            reply.message.append(_summary(config))
            return reply.answer()
        if missing is not request.current_step:
            reply.next_step = missing
        _ask(field_spec(STEP_TO_FIELD_MAPPING[missing]), _Context.of(request, config), reply)
        return reply.answer()


def _read_text(request: GuideRequest, reply: _Reply) -> None:
    """What typed text answers: a ``field: value`` command, else the current step's field;
    text that answers the purpose also fills what it already says (``_prefill``)."""
    text = request.message.strip()
    if not isinstance(request.action, TextInput) or not text:
        return
    command = _field_command(text)
    if command is not None:
        name, raw = command
    elif request.current_step in (WorkflowStep.EXPLORATION, WorkflowStep.PURPOSE):
        _prefill(request, read_text(text), reply)
        return
    elif is_data_step(request.current_step):
        name, raw = STEP_TO_FIELD_MAPPING[request.current_step], text
    else:
        return
    if name in request.edited_fields:
        return  # the user entered it in the panel with this message: theirs, not read
    spec = field_spec(name)
    try:
        value = parse_field_value(name, _match_choice(spec, raw), split_text=True)
    except InvalidInputError as exc:
        reply.message.append(f"I could not use that as the {spec.label}: {exc.message}")
        return
    reply.extracted[name] = value
    reply.message.append(f"Got it. {spec.label.capitalize()}: {spec.shown(value)}.")


def _prefill(request: GuideRequest, reading: Reading, reply: _Reply) -> None:
    """The purpose (the text itself, when it states an aim or answers the purpose step),
    and the focus areas and organisations it names, each only when still empty."""
    config = request.config
    found: dict[str, FieldValue] = {}
    at_purpose = request.current_step is WorkflowStep.PURPOSE
    if config.purpose is None and (reading.states_aim or at_purpose):
        found["purpose"] = reading.text
    if config.focus_areas is None and reading.topics:
        found["focus_areas"] = list(reading.topics)
    if config.competitors is None and reading.organisations:
        found["competitors"] = list(reading.organisations)
    if config.report_frequency is None and reading.frequency is not None:
        found["report_frequency"] = reading.frequency
    for name, value in found.items():
        if name in request.edited_fields:
            continue  # entered (or cleared) in the panel with this message: the user's
        try:
            reply.extracted[name] = parse_field_value(name, value)
        except InvalidInputError:
            continue  # too long, or nothing left once cleaned: asked for later instead
    if reply.extracted:
        reply.message.append(_noted(reply.extracted))


def _noted(extracted: dict[str, FieldValue]) -> str:
    """ "From what you wrote, I filled in the purpose, the focus areas (a, b) and ..."."""
    parts: list[str] = []
    for name in PREFILLED:
        if name not in extracted:
            continue
        spec = field_spec(name)
        value = extracted[name]
        shown = spec.shown(value) if isinstance(value, list) else spec.shown(value).lower()
        detail = f" ({shown})" if name != "purpose" else ""
        parts.append(f"the {spec.label}{detail}")
    return (  # a paragraph of its own, before the next question
        f"From what you wrote, I filled in {joined(parts)}. Change anything that is not "
        "right in the panel.\n\n"
    )


def _field_command(text: str) -> tuple[str, str] | None:
    for spec in field_specs():
        spellings = dict.fromkeys([spec.name, spec.name.replace("_", " "), spec.label])
        names = "|".join(re.escape(n) for n in spellings)
        for pattern in (
            rf"^\s*(?:{names})\s*[:=]\s*(?P<value>.+)$",
            rf"^\s*(?:please\s+)?(?:actually,?\s+)?(?:change|set|update)\s+(?:the\s+)?"
            rf"(?:{names})\s+to\s+(?P<value>.+)$",
        ):
            match = re.match(pattern, text, re.IGNORECASE | re.DOTALL)
            if match:
                return spec.name, match.group("value").strip().strip("'\"")
    return None


def _match_choice(spec: FieldSpec, text: str) -> str:
    """For a choice field, the choice named in ``text`` ("weekly please" -> weekly,
    "clinical research" -> clinical)."""
    if spec.kind is not FieldKind.CHOICE:
        return text
    lowered = text.lower()
    for alias, choice in _CHOICE_ALIASES.items():
        if alias in lowered and choice in spec.choices:
            return choice
    for choice in spec.choices:
        label = spec.choice_label(choice).lower()
        if re.search(rf"\b{re.escape(choice)}\b", lowered) or label in lowered:
            return choice
    return text


def _review_turn(request: GuideRequest, config: PartialStreamConfig, reply: _Reply) -> None:
    ready = all_required_complete(completed_steps(config, request.skipped_steps))
    if ready and not reply.extracted and _CONFIRM.match(request.message):
        reply.next_step = WorkflowStep.COMPLETE
        reply.message.append(f"Done: the stream \u201c{config.stream_name}\u201d is created.")
        return
    if not ready:
        reply.message.append("Some required fields are empty; fill them in first.")
    reply.message.append(_summary(config))


def _summary(config: PartialStreamConfig) -> str:
    lines = ["Here is the stream:"]
    for spec in field_specs():
        lines.append(f"- {spec.label.capitalize()}: {spec.shown(getattr(config, spec.name))}")
    lines.append(
        "Create it, or change a field in the panel, or tell me what to change (for example "
        "\u201cKeywords: a, b\u201d)."
    )
    return "\n".join(lines)


@dataclass(frozen=True)
class _Context:
    """What the user said about the subject, and what they entered: where suggestions come
    from. The subject is said in the purpose, the opening message and any message typed
    where the purpose was asked, not in answers to other questions ("Go/no-go decisions")."""

    about: tuple[str, ...]
    typed: tuple[str, ...]
    config: PartialStreamConfig

    @classmethod
    def of(cls, request: GuideRequest, config: PartialStreamConfig) -> _Context:
        said = [m for m in request.history if m.role == "user" and m.content.strip()]
        about = [config.purpose or ""]
        about += [m.content for m in said if m.step in _ABOUT_STEPS]
        if request.current_step in _ABOUT_STEPS:
            about.append(request.message)
        return cls(
            tuple(t for t in dict.fromkeys(a.strip() for a in about) if t),
            tuple([*(m.content.strip() for m in said), request.message.strip()]),
            config,
        )

    @property
    def reading(self) -> Reading:
        """A reading of what was said about the subject: its topics, its names."""
        return read_text(". ".join(t.rstrip(". ") for t in self.about))

    @property
    def everything(self) -> str:
        entered = [
            " ".join(v) if isinstance(v, list) else str(v) for _, v in self.config if v is not None
        ]
        return ". ".join([*self.typed, *entered])

    def type_order(self) -> list[StreamType]:
        """Every stream type, the ones the text hints at first (and the type chosen): its
        words, and the organisations the user follows (each a hint of a watch on them)."""
        lowered = self.everything.lower()
        score = {t: sum(lowered.count(cue) for cue in cues) for t, cues in _TYPE_CUES.items()}
        score[StreamType.COMPETITIVE] += len(self.reading.organisations)
        chosen = self.config.stream_type
        if chosen is not None:
            score[chosen] = score.get(chosen, 0) + 100
        return sorted(_TYPE_ORDER, key=lambda t: -score.get(t, 0))


def _ask(spec: FieldSpec, context: _Context, reply: _Reply) -> None:
    chips = _CHIPS[spec.name](context)
    chips = [c for c in _unique(chips) if _acceptable(spec, c)][:MAX_CHIPS]
    reply.message.append(spec.question)
    reply.target_field = spec.name
    if spec.kind is FieldKind.LIST and chips:
        reply.options = chips
        reply.proposed_message = f"Continue with these {spec.label}"
        reply.message.append("Tick the ones that apply, or type your own (comma-separated).")
    elif chips:
        reply.suggestions = chips
        tail = "Pick one below." if spec.kind is FieldKind.CHOICE else "Pick one or type yours."
        reply.message.append(tail)
    elif spec.kind is FieldKind.LIST:
        reply.message.append("Type them separated by commas.")


def _acceptable(spec: FieldSpec, value: str) -> bool:
    try:
        parse_field_value(spec.name, [value] if spec.kind is FieldKind.LIST else value)
    except InvalidInputError:
        return False
    return True


def _unique(values: Sequence[str]) -> list[str]:
    seen: set[str] = set()
    kept: list[str] = []
    for value in values:
        if value.lower() not in seen:
            seen.add(value.lower())
            kept.append(value)
    return kept


def _by_type(
    catalogue: Sequence[tuple[str, frozenset[StreamType]]], context: _Context
) -> list[str]:
    """The catalogue's entries, those suiting the most likely stream type first."""
    order = context.type_order()
    rank = {t: i for i, t in enumerate(order)}
    return [
        text
        for text, types in sorted(
            catalogue, key=lambda entry: min(rank[t] for t in entry[1] if t in rank)
        )
    ]


def _purpose_chips(context: _Context) -> list[str]:
    return purpose_ideas(context.reading)


def _keyword_chips(context: _Context) -> list[str]:
    """The topics and places of what was typed, then the focus areas: never an
    organisation (those are followed as organisations) nor a collective of people."""
    reading = context.reading
    names = {n.lower() for n in (*reading.organisations, *reading.own_organisations)}
    terms = [*reading.terms, *(context.config.focus_areas or [])]
    return [t for t in terms if t.lower() not in names]


def _organisation_chips(context: _Context) -> list[str]:
    reading = context.reading
    return [*reading.organisations, *reading.own_organisations]


_CHIPS: dict[str, Callable[[_Context], list[str]]] = {
    "purpose": _purpose_chips,
    "business_goals": lambda context: _by_type(GOALS, context)[:MAX_GOALS],
    "expected_outcomes": lambda context: _by_type(EXPECTED_OUTCOMES, context),
    "stream_name": lambda context: name_ideas(context.reading),
    "stream_type": lambda context: [t.value for t in context.type_order()],
    "focus_areas": lambda context: list(context.reading.topics),
    "keywords": _keyword_chips,
    "competitors": _organisation_chips,
    "report_frequency": lambda _context: list(field_spec("report_frequency").choices),
}
