// The API client every page uses: JSON in and out, same-origin credentials, and the API's
// error body ({code, message, hint, fields, request_id}) carried by the error it throws.

/** An error the API answered (or a non-JSON answer), with the API's body when it sent one. */
export class ApiError extends Error {
  constructor(status, body, statusText = "") {
    const message = body?.message ?? `The server answered ${status}${statusText ? ` ${statusText}` : ""}.`;
    super(body?.hint ? `${message} ${body.hint}` : message);
    this.name = "ApiError";
    this.status = status;
    this.body = body;
  }
}

/** The ApiError for a response that is not ok. */
export async function errorOf(response) {
  // A proxy or a crashed worker may answer with HTML: never let JSON parsing hide the status.
  const body = await response.json().catch(() => null);
  return new ApiError(response.status, body, response.statusText);
}

/** ``fetch`` for the JSON API: the parsed body, ``null`` for 204, an ApiError otherwise. */
export async function api(path, options = {}) {
  // A FormData body (file upload) needs the browser's own multipart type with its boundary.
  const json = options.body instanceof FormData ? {} : { "Content-Type": "application/json" };
  const response = await fetch(path, {
    credentials: "same-origin",
    ...options,
    // After the spread, so a caller's extra headers add to the content type.
    headers: { ...json, ...(options.headers || {}) },
  });
  if (response.status === 204) return null;
  const body = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, body, response.statusText);
  return body;
}
