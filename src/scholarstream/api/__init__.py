"""The HTTP API (FastAPI): routes under /api/v1, one error body, OpenAPI at /docs."""

from scholarstream.api.app import API_PREFIX, create_app
from scholarstream.api.errors import ErrorBody, FieldError

__all__ = ["API_PREFIX", "ErrorBody", "FieldError", "create_app"]
