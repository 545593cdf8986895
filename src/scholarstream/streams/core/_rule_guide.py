"""The guide without a model: it walks the same steps by rule. It asks for each missing
field in the seed's order, offers the enum values of ``stream_type`` and
``report_frequency`` as suggestions, and draws the other suggestions from what the user
typed (a purpose from the first message, a stream name from the purpose, keywords and
focus areas from the text, competitors from the organisation names in it: see
``_terms`` for how a name such as "Palatin Technologies" is told from the topic around it).

It stays on the current step until its field is answered (an edit of another field
does not move it on). Typed text answers the current step's field. ``<field>: <value>``
(or "change the <field> to <value>") sets any field from any step, as Scenario C of the
seed does with a model. In review, "yes" / "create" / "confirm" creates the stream.
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator, Callable
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
from scholarstream.streams.core._terms import name_ideas
from scholarstream.streams.core._workflow import (
    DATA_STEPS,
    STEP_TO_FIELD_MAPPING,
    WorkflowStep,
    all_required_complete,
    completed_steps,
    is_data_step,
)
from scholarstream.understanding import key_phrases, proper_names, topic_phrases

MAX_CHIPS = 8
BUSINESS_GOALS = (
    "Track competitive landscape",
    "Inform study design decisions",
    "Identify new therapeutic indications",
    "Support partnership discussions",
    "Monitor regulatory changes",
)
EXPECTED_OUTCOMES = (
    "Regular briefings for the leadership team",
    "Go/no-go decisions on development programs",
    "Early warning of competitor moves",
)
_TYPE_CUES: dict[StreamType, tuple[str, ...]] = {
    StreamType.COMPETITIVE: ("competit", "rival", "company", "companies", "pipeline"),
    StreamType.REGULATORY: ("regulat", "fda", "ema", "approval", "guidance", "complian"),
    StreamType.CLINICAL: ("clinical", "trial", "patient", "efficacy", "safety"),
    StreamType.MARKET: ("market", "pricing", "sales", "commercial", "launch"),
    StreamType.SCIENTIFIC: ("mechanism", "science", "scientific", "biology", "discovery"),
}
_CHOICE_ALIASES = {
    "bi-weekly": "biweekly",
    "fortnightly": "biweekly",
    "every two weeks": "biweekly",
    "every day": "daily",
    "every week": "weekly",
    "every month": "monthly",
}
_CONFIRM = re.compile(
    r"^\s*(yes|yep|y|ok|okay|sure|confirm(ed)?|create( it| the stream)?|looks good|lgtm|"
    r"go( ahead)?|do it)\b",
    re.IGNORECASE,
)


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
            message=" ".join(self.message),
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
    """What typed text answers: a ``field: value`` command, else the current step's field."""
    text = request.message.strip()
    if not isinstance(request.action, TextInput) or not text:
        return
    command = _field_command(text)
    if command is not None:
        name, raw = command
    elif is_data_step(request.current_step):
        name, raw = STEP_TO_FIELD_MAPPING[request.current_step], text
    else:
        return
    spec = field_spec(name)
    try:
        value = parse_field_value(name, _match_choice(spec, raw), split_text=True)
    except InvalidInputError as exc:
        reply.message.append(f"I could not use that as the {spec.label}: {exc.message}")
        return
    reply.extracted[name] = value
    reply.message.append(f"Got it. {spec.label.capitalize()}: {_shown(value)}.")


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
    """For a choice field, the choice named in ``text`` ("weekly please" -> weekly)."""
    if spec.kind is not FieldKind.CHOICE:
        return text
    lowered = text.lower()
    for alias, choice in _CHOICE_ALIASES.items():
        if alias in lowered and choice in spec.choices:
            return choice
    for choice in spec.choices:
        if re.search(rf"\b{re.escape(choice)}\b", lowered):
            return choice
    return text


def _review_turn(request: GuideRequest, config: PartialStreamConfig, reply: _Reply) -> None:
    ready = all_required_complete(completed_steps(config, request.skipped_steps))
    if ready and not reply.extracted and _CONFIRM.match(request.message):
        reply.next_step = WorkflowStep.COMPLETE
        reply.message.append(f"Done: the stream {config.stream_name!r} is created.")
        return
    if not ready:
        reply.message.append("Some required fields are empty; fill them in first.")
    reply.message.append(_summary(config))


def _summary(config: PartialStreamConfig) -> str:
    lines = ["Here is the stream:"]
    for spec in field_specs():
        value = getattr(config, spec.name)
        shown = ", ".join(value) if isinstance(value, list) else value or "(none)"
        lines.append(f"- {spec.label.capitalize()}: {shown}")
    lines.append(
        "Reply 'create' to create it, or change a field here or by writing "
        "'<field>: <value>' (for example 'keywords: a, b')."
    )
    return "\n".join(lines)


@dataclass(frozen=True)
class _Context:
    """What the user typed (oldest first) and entered: where suggestions come from."""

    typed: tuple[str, ...]
    config: PartialStreamConfig

    @classmethod
    def of(cls, request: GuideRequest, config: PartialStreamConfig) -> _Context:
        typed = [m.content for m in request.history if m.role == "user"]
        typed.append(request.message)
        return cls(tuple(t.strip() for t in typed if t.strip()), config)

    @property
    def topic(self) -> str:
        """The text about the subject: the purpose and the terms entered (what was typed
        before there was a purpose, until there is one)."""
        c = self.config
        parts = [c.purpose or ". ".join(self.typed), c.stream_name or ""]
        parts += [*(c.focus_areas or []), *(c.keywords or []), *(c.competitors or [])]
        return ". ".join(p for p in parts if p)

    @property
    def mentions(self) -> str:
        """Where organisations are named: the purpose (or what was typed) and the
        competitors entered. Not the stream name, a label the user chose ("Palatin Pipeline
        Tracker"), nor the focus areas and keywords, topics written capitalised as list
        items ("Sexual dysfunction")."""
        c = self.config
        return ". ".join([c.purpose or ". ".join(self.typed), *(c.competitors or [])])

    @property
    def everything(self) -> str:
        entered = [
            " ".join(v) if isinstance(v, list) else str(v) for _, v in self.config if v is not None
        ]
        return ". ".join([*self.typed, *entered])


def _ask(spec: FieldSpec, context: _Context, reply: _Reply) -> None:
    chips = _CHIPS[spec.name](context)
    chips = [c for c in chips if _acceptable(spec, c)][:MAX_CHIPS]
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


def _shown(value: FieldValue) -> str:
    return ", ".join(value) if isinstance(value, list) else value


def _purpose_chips(context: _Context) -> list[str]:
    """The latest thing the user typed, as the purpose it probably is."""
    return list(context.typed[-1:])


def _type_chips(context: _Context) -> list[str]:
    """Every stream type, the ones the text hints at first."""
    lowered = context.everything.lower()
    score = {t: sum(lowered.count(cue) for cue in cues) for t, cues in _TYPE_CUES.items()}
    return [t.value for t in sorted(StreamType, key=lambda t: -score.get(t, 0))]


def _name_chips(context: _Context) -> list[str]:
    return name_ideas(context.topic)


def _keyword_chips(context: _Context) -> list[str]:
    return [*key_phrases(context.topic, limit=MAX_CHIPS), *(context.config.focus_areas or [])]


_CHIPS: dict[str, Callable[[_Context], list[str]]] = {
    "purpose": _purpose_chips,
    "business_goals": lambda _context: list(BUSINESS_GOALS),
    "expected_outcomes": lambda _context: list(EXPECTED_OUTCOMES),
    "stream_name": _name_chips,
    "stream_type": _type_chips,
    "focus_areas": lambda context: topic_phrases(context.topic),
    "keywords": _keyword_chips,
    "competitors": lambda context: proper_names(context.mentions),
    "report_frequency": lambda _context: list(field_spec("report_frequency").choices),
}
