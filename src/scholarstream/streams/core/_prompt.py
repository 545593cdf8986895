"""The prompts of one guide turn: the per-step system prompt of seed 000, section 5 (its
text kept; its line-based return format replaced by the structured answer's fields), and
the user prompt with the message, the action and the configuration so far."""

from __future__ import annotations

import json
from collections.abc import Sequence

from scholarstream.streams.core._config import PartialStreamConfig
from scholarstream.streams.core._fields import field_specs
from scholarstream.streams.core._workflow import StepGuidance, WorkflowStep

_EXPLORATION = """
You are in EXPLORATION mode - a conversational space for gathering context.

Your role:
- Ask clarifying questions to understand the user's needs
- Gather information about their field, the organisations they follow (companies, \
universities, labs, research groups), research areas, goals, etc.
- When you have enough context to suggest options for a specific field → transition to that \
data step

Decision logic:
- Do I have enough context to suggest options for a field? → YES: transition to that data step
- Do I need more information? → NO: stay in exploration and ask questions
"""

_REVIEW = """
You are in REVIEW mode - the user is confirming their configuration.

Your role:
- Present the configuration for review
- If user confirms → transition to COMPLETE
- If user wants changes → transition to EXPLORATION
"""

_DATA_STEP = """
You are collecting the field: {field_name}

Your role:
- Provide SUGGESTIONS or OPTIONS for this field
- After user selects, reason about the best next step
"""

_NON_DATA_CONTEXT = {
    WorkflowStep.EXPLORATION: _EXPLORATION,
    WorkflowStep.REVIEW: _REVIEW,
    WorkflowStep.COMPLETE: "\nThe workflow is complete: the stream has been created.\n",
}

_COMPLETED = """
IMPORTANT: The user just completed the previous step by selecting an option.
The field '{field_name}' has been populated.
You now need to reason about which next step makes the most sense given the conversation trajectory.
"""

_SKIPPED = """
IMPORTANT: The user just completed the previous step by skipping it.
The optional field '{field_name}' was skipped.
You now need to reason about which next step makes the most sense given the conversation trajectory.
"""

_RULES_AND_FORMAT = """
CRITICAL RULES:

1. You can ONLY transition to steps in the "Valid next steps" list above
2. EXPLORATION is your conversational hub - always available when you need to ask questions
3. Data steps require MODE: SUGGESTION with actual suggestions/options
4. When transitioning, reason about which step makes most sense given:
   - Conversation trajectory (what's been discussed)
   - What fields are already populated
   - What would be the most natural next question
5. Never ask for what the user already said: put in extracted_data every field their \
words answer (a stated aim -> purpose, organisations they want to follow -> competitors, \
topics and research areas -> focus_areas) and move on to a field that is still empty
6. Users are academic researchers and industry analysts alike: word your messages for \
both, and do not assume a company, a product or a drug pipeline
7. The user reads your message: never write field names, step names or stored values \
in it (write "goals", not "business_goals"; "every two weeks", not "biweekly"); each \
field below says how it is shown
8. Purpose suggestions are different aims for the user's subject (keeping up with new \
research, collecting evidence for a review, following named organisations...), not the \
user's own sentence repeated; keyword suggestions are search terms for the subject, never \
the user's role or affiliation ("my lab", "a cardiology group")

TWO MODES:

**MODE: QUESTION** (use in exploration or when gathering context)
- Ask clarifying questions
- Gather information
- No suggestions provided

**MODE: SUGGESTION** (use in data steps when you can provide options)
- Provide SUGGESTIONS (single-select)
- OR provide OPTIONS (multi-select with checkboxes)
- Must specify TARGET_FIELD

TRANSITION REASONING:

After a step completes, ask yourself:
1. What context do I have from the conversation?
2. What fields are already filled?
3. What's the most natural next question?
4. Can I suggest options for a specific field, or do I need more context?

If you can suggest → go to that data step
If you need context → go to exploration

Return your answer in the structured format, with these fields:
- mode: "question" or "suggestion"
- message: your conversational message to the user
- target_field: the field name (only in suggestion mode)
- extracted_data: {{field_name: value}} for data you extracted from the user's message \
(a string for text and single-select fields, a list of strings for list fields)
- suggestions: [option1, option2, option3] (single-select)
- options: [option1, option2, option3] (multi-select)
- proposed_message: button text for continue (only with options)
- next_step: the step name (choose from the valid next steps list based on reasoning)

Available fields:
{fields}
"""


def build_system_prompt(
    *,
    current_step: WorkflowStep,
    step_guidance: StepGuidance,
    valid_next_steps: Sequence[WorkflowStep],
    step_just_completed: bool,
    field_name: str | None,
    skipped: bool = False,
) -> str:
    """Seed 000's ``_build_system_prompt``. ``field_name`` is the field the just-completed
    step populated (or skipped); ``step_guidance`` describes the current step."""
    valid_steps_text = ", ".join(step.value for step in valid_next_steps) or "(none)"
    completion_context = ""
    if step_just_completed:
        template = _SKIPPED if skipped else _COMPLETED
        completion_context = template.format(field_name=field_name)
    if step_guidance.field is None:
        step_context = _NON_DATA_CONTEXT[current_step]
    else:
        step_context = _DATA_STEP.format(field_name=step_guidance.field)
    fields = "\n".join(f"- {spec.describe()}" for spec in field_specs())
    return (
        "You are an AI assistant helping users create research streams.\n\n"
        f"Current Step: {current_step.value}\n"
        f"Valid next steps you can transition to: {valid_steps_text}\n"
        f"{completion_context}\n"
        f"{step_context}\n"
        f"{_RULES_AND_FORMAT.format(fields=fields)}"
    )


def build_user_prompt(
    *,
    message: str,
    action_note: str,
    config: PartialStreamConfig,
    skipped_steps: Sequence[WorkflowStep],
    step_guidance: StepGuidance,
    edited_fields: Sequence[str] = (),
) -> str:
    """Seed 000's ``_build_user_prompt``: the message, what the user did, the configuration
    so far (with the user's inline edits, and which fields they edited in this turn) and
    what the current step asks."""
    filled = config.model_dump(mode="json", exclude_none=True)
    lines = [f"User message: {message.strip() or '(no text)'}"]
    if action_note:
        lines.append(f"User action: {action_note}")
    if edited_fields:
        lines.append(
            f"User edited: {', '.join(edited_fields)} (in the panel, just now: keep these "
            "values, do not extract them)"
        )
    lines.append("Current configuration: " + (json.dumps(filled, ensure_ascii=False) or "{}"))
    if skipped_steps:
        lines.append("Skipped steps: " + ", ".join(step.value for step in skipped_steps))
    guidance = f"Current step: {step_guidance.step.value}: {step_guidance.description}"
    if step_guidance.choices:
        guidance += f" (one of: {', '.join(step_guidance.choices)})"
    lines.append(guidance)
    return "\n".join(lines)
