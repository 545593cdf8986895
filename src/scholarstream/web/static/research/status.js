// What a research's status means on its page: the seed 001 tables the Python side keeps in
// scholarstream.research (display.CARD_DISPLAY, display.synthesis_not_available,
// retry.RETRY_FROM_FAILED, failures.error_summary), written once more for the browser.
// Pure functions of the research as the API returns it (camelCase), no DOM: the page
// imports them, and tests/web/test_research_status_js.py loads this module in Chromium
// and compares every mapping with the Python one so the two cannot drift apart.

export const STATUSES = [
  "draft", "processing", "synthesizing", "awaiting_confirmation", "retrying", "completed", "failed",
];

export const STATUS_LABELS = {
  draft: "Draft",
  processing: "Processing",
  synthesizing: "Synthesizing",
  retrying: "Retrying",
  awaiting_confirmation: "Awaiting confirmation",
  completed: "Completed",
  failed: "Failed",
};

export const MAX_RETRIES = 2;

const completed = (r) => r.llmResults.filter((result) => result.status === "completed");
const failedModels = (r) => r.llmResults.filter((result) => result.status === "failed");

const nothingToCombine = (r) => r.status === "completed" && !r.synthesizedResult
  && completed(r).length <= 1 && !(r.externalReports?.length);

/** A completed research whose synthesis failed (retry.synthesis_retryable): Retry runs the
 *  synthesis again. */
export function synthesisRetryable(r) {
  return r.status === "completed" && r.synthesisError != null;
}

const synthesisFailed = (r) => synthesisRetryable(r) && !r.synthesizedResult;

/** The seed's showSynthesisNotAvailable (display.synthesis_not_available): completed, no
 *  synthesis, at most one successful model, no external reports (its inputContexts); or
 *  a completed research whose synthesis failed. */
export function synthesisNotAvailable(r) {
  return nothingToCombine(r) || synthesisFailed(r);
}

export const NOTHING_TO_COMBINE = "Synthesis not available: only one model answered and no "
  + "other report was given, so there was nothing to combine.";

/** What the page says instead of a synthesis (display.synthesis_notice), or null. */
export function synthesisNotice(r) {
  if (synthesisFailed(r)) {
    const reason = (r.synthesisError ?? "").trim().replace(/\.+$/, "") || "the synthesis failed";
    return `Synthesis not available: ${reason}. Retry runs the synthesis again.`;
  }
  return nothingToCombine(r) ? NOTHING_TO_COMBINE : null;
}

/** The seed's "Status -> UI Mapping" (display.CARD_DISPLAY): which card a research shows. */
export const CARD_DISPLAY = {
  draft: () => "edit_form",
  processing: () => "progress_per_llm",
  synthesizing: () => "synthesizing",
  retrying: () => "retrying",
  awaiting_confirmation: () => "confirmation_dialog",
  completed: (r) => (r.synthesizedResult ? "synthesis_and_reports" : "reports_without_synthesis"),
  failed: () => "error_with_retry",
};

export function cardDisplay(r) {
  return CARD_DISPLAY[r.status]?.(r) ?? null;
}

export function retriesLeft(r) {
  return Math.max(0, MAX_RETRIES - (r.partialFailure?.retryCount ?? 0));
}

/** Whether the synthesis has something to work on: an answer or an external report. */
const canSynthesise = (r) => completed(r).length > 0 || (r.externalReports?.length ?? 0) > 0;

/** What Retry does for a failed research (retry.RETRY_FROM_FAILED, first row that applies). */
export const RETRY_FROM_FAILED = [
  { condition: "failed LLMs that may be retried", applies: (r) => failedModels(r).length > 0 && retriesLeft(r) > 0, action: "retry_llms" },
  { condition: "failed LLMs, no retry left, answers to synthesise", applies: (r) => failedModels(r).length > 0 && canSynthesise(r), action: "rerun_synthesis" },
  { condition: "failed LLMs, no retry left, nothing to synthesise", applies: (r) => failedModels(r).length > 0, action: "retry_llms" },
  { condition: "synthesis error", applies: (r) => r.synthesisError != null, action: "rerun_synthesis" },
  { condition: "nothing to retry", applies: () => true, action: "no_op" },
];

export function retryAction(r) {
  return RETRY_FROM_FAILED.find((row) => row.applies(r)).action;
}

const RETRY_ADVICE = {
  retry_llms: (r) => `Retry asks the failed models again (${retriesLeft(r)} of ${MAX_RETRIES} retries left), then the research goes on with their answers.`,
  rerun_synthesis: () => "Retry runs the synthesis again on the answers already received.",
  no_op: () => "Retry completes the research: nothing failed any more.",
};
const NOTHING_LEFT = "Both retries are used and no model answered: start a new research to ask again.";

/** The seed's error summary row for the failure reason (failures.ERROR_SUMMARY): what the
 *  user can do, and the advice to show, when it does not depend on what Retry would do. */
const USER_ACTIONS = {
  all_llms_failed: { action: "retry" },
  synthesis_failed: { action: "retry" },
  max_retries_exceeded: { action: "create_new_research", advice: "Both retries are used: start a new research to ask again." },
  api_key_invalid: { action: "update_api_keys_and_retry", advice: "A provider refused its API key: update the key under Settings, then retry." },
  cancelled_by_user: { action: "create_new_research", advice: "You cancelled it: start a new research to ask again." },
};

/** What the user can do with a failed research and the advice that says so truthfully
 *  (failures.error_summary): ``{ action, advice }``, or null unless failed. */
export function userAction(r) {
  const row = USER_ACTIONS[r.failureReason];
  if (r.status !== "failed" || !row) return null;
  const retry = retryAction(r);
  const exhausted = retry === "retry_llms" && retriesLeft(r) === 0;
  if (row.action === "retry") {
    return exhausted ? { action: "create_new_research", advice: NOTHING_LEFT }
      : { action: "retry", advice: RETRY_ADVICE[retry](r) };
  }
  if (r.failureReason === "max_retries_exceeded") {
    if (retry === "rerun_synthesis") {
      return {
        action: "retry",
        advice: "Both retries are used: Retry runs the synthesis on the answers already received, without the failed models, or start a new research.",
      };
    }
    return { action: row.action, advice: exhausted ? NOTHING_LEFT : row.advice };
  }
  return { action: row.action, advice: row.advice };
}
