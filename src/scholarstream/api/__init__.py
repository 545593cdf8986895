"""The HTTP API (FastAPI): routes under /api/v1, one error body, OpenAPI at /docs."""

from scholarstream.api._app import API_PREFIX, create_app
from scholarstream.api._errors import ErrorBody, FieldError

__all__ = ["API_PREFIX", "ErrorBody", "FieldError", "create_app"]
