// Criteria, keywords and counts are typed one per line.

/** The non-empty lines of a textarea, trimmed. */
export function lines(text) {
  return text.split("\n").map((line) => line.trim()).filter(Boolean);
}
