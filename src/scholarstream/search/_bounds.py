"""Bounded text and lists for the output schemas the search skills send to a model.

A local server turns the JSON schema into a grammar, so the schema's bounds are what stop
a small model from writing ever-longer lists and sentences until its token budget cuts the
answer, or from answering with an empty list. The bounds are in the schema; when
validating, a value over the maximum is cut to it rather than refused (a cloud model that
ignores ``maxItems`` still gives a usable answer, and a good answer never comes near the
bounds), and a value under the minimum is left to the skill, which already treats an
empty answer as unusable.

Use as ``Annotated[str, Text(100)]``, ``Annotated[list[int], Items(10, least=10)]`` or
``Annotated[str, OneOf(("pubmed", "arxiv"))]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, core_schema


@dataclass(frozen=True)
class _Bound:
    most: int
    least: int = 0
    cut: bool = True
    """False: the maximum is the schema's only (a longer value is kept, for the skill to
    sort out)."""

    _MAX: ClassVar[str] = ""
    _MIN: ClassVar[str] = ""

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        most = self.most
        if not self.cut:
            return handler(source)

        def cut(value: Any) -> Any:
            return value[:most] if isinstance(value, str | list) else value

        return core_schema.no_info_before_validator_function(cut, handler(source))

    def __get_pydantic_json_schema__(
        self, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        json_schema = handler(schema)
        json_schema[self._MAX] = self.most
        if self.least:
            json_schema[self._MIN] = self.least
        return json_schema


@dataclass(frozen=True)
class Text(_Bound):
    """A string of at most ``most`` characters (``maxLength``; ``minLength`` ``least``)."""

    _MAX: ClassVar[str] = "maxLength"
    _MIN: ClassVar[str] = "minLength"


@dataclass(frozen=True)
class Items(_Bound):
    """A list of at most ``most`` items (``maxItems``; ``minItems`` ``least``)."""

    _MAX: ClassVar[str] = "maxItems"
    _MIN: ClassVar[str] = "minItems"


@dataclass(frozen=True)
class OneOf:
    """A string the schema restricts to ``values`` (``enum``); validation still takes any
    string, so the skill can drop an unknown value with a note instead of losing the
    whole answer."""

    values: tuple[str, ...]

    def __get_pydantic_json_schema__(
        self, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        json_schema = handler(schema)
        if self.values:
            json_schema["enum"] = list(self.values)
        return json_schema
