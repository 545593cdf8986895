"""The API addresses the web UI builds, read from its source: the JavaScript modules under
``web/static`` and the Jinja templates. For each address: the path and the query parameters
it can send (tests/api/test_query_params.py compares them with what the routes declare).

A small reader of the JavaScript this project writes, not a JavaScript parser. It follows:

- an address written as a string or a template literal that begins with ``/api/v1``, or with
  a constant or a function of the module (or one it imports) that holds or returns one;
- the query written in it: ``?name=${value}&other=...``, or ``?${params}`` where ``params``
  is ``new URLSearchParams({name: ...})``, a variable made so and then given names with
  ``params.set("name", ...)`` / ``params.append(...)`` (a name may come from
  ``for (const name of LIST)`` over a constant array of strings), or a function of the
  module that returns such a variable.

An address it cannot read (a query made some other way, a path built from a variable that
may hold a query, a URL glued with ``+``) is reported as a problem, never skipped: write the
address in one of the forms above so that what the page sends can be checked.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

API = "/api/v1"
HOLE = "\x00"
"""A path segment whose value the page computes (an id)."""

_WORD = re.compile(r"[A-Za-z_$][\w$]*")
_REGEX_AFTER = frozenset("(,=:[!&|?{};+-*%<>~^}")
_REGEX_AFTER_WORDS = frozenset(
    {"return", "typeof", "case", "do", "else", "in", "of", "new", "delete", "void", "throw"}
    | {"yield", "await"}
)
_OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = {")", "]", "}"}
_CALLERS = re.compile(r"(?:\bapi|\bfetch|\bnew\s+EventSource)\s*\(\s*$")


class UnreadableError(Exception):
    """The reader cannot tell what a page sends here; the message says why."""


@dataclass(frozen=True)
class Expr:
    """``${...}`` in a template literal: its source and where the source starts."""

    source: str
    start: int


Part = str | Expr


@dataclass(frozen=True)
class Literal:
    start: int
    end: int
    """Just past the closing quote."""
    parts: tuple[Part, ...]


@dataclass(frozen=True)
class ApiCall:
    """One address of the API the UI builds."""

    where: str
    """``library/library.js:233``, ``templates/library.html:88``."""
    path: str
    """``/api/v1/library/records/\\x00``: HOLE for each segment the page computes."""
    params: tuple[str, ...]
    """The query parameters it can send (empty: none)."""
    problem: str | None = None
    """Why the reader cannot tell what is sent (then path and params are what it read)."""


# --- the lexer --------------------------------------------------------------------------------


class _Lexer:
    """Finds the string and template literals of a module, and makes its skeleton: the text
    with comments and the contents of strings, templates and regular expressions blanked
    (same length, so positions are the text's), for finding code by pattern."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.skeleton = list(text)
        self.literals: list[Literal] = []

    def run(self) -> tuple[str, list[Literal]]:
        self._code(0, nested=False)
        return "".join(self.skeleton), sorted(self.literals, key=lambda lit: lit.start)

    def _blank(self, start: int, end: int) -> None:
        for i in range(start, min(end, len(self.text))):
            if self.skeleton[i] != "\n":
                self.skeleton[i] = " "

    def _code(self, i: int, *, nested: bool) -> int:
        text, n = self.text, len(self.text)
        depth = 0
        previous = ""
        while i < n:
            c = text[i]
            if c in "'\"":
                i, previous = self._string(i), "x"
            elif c == "`":
                i, previous = self._template(i), "x"
            elif text.startswith("//", i):
                end = text.find("\n", i)
                end = n if end < 0 else end
                self._blank(i, end)
                i = end
            elif text.startswith("/*", i):
                end = text.find("*/", i + 2)
                end = n if end < 0 else end + 2
                self._blank(i, end)
                i = end
            elif c == "/" and (
                previous == "" or previous in _REGEX_AFTER or previous in _REGEX_AFTER_WORDS
            ):
                i, previous = self._regex(i), "x"
            elif c.isspace():
                i += 1
            elif match := _WORD.match(text, i):
                previous = match.group(0)
                i = match.end()
            else:
                if nested and c == "{":
                    depth += 1
                elif nested and c == "}":
                    if depth == 0:
                        return i
                    depth -= 1
                previous = c
                i += 1
        return i

    def _string(self, i: int) -> int:
        quote, j = self.text[i], i + 1
        while j < len(self.text) and self.text[j] != quote:
            j += 2 if self.text[j] == "\\" else 1
        value = re.sub(r"\\(.)", r"\1", self.text[i + 1 : j])
        self._blank(i + 1, j)
        self.literals.append(Literal(i, j + 1, (value,)))
        return j + 1

    def _template(self, i: int) -> int:
        text = self.text
        parts: list[Part] = []
        j = chunk = i + 1
        while j < len(text) and text[j] != "`":
            if text[j] == "\\":
                j += 2
            elif text.startswith("${", j):
                self._blank(chunk, j)
                parts.append(re.sub(r"\\(.)", r"\1", text[chunk:j]))
                end = self._code(j + 2, nested=True)
                parts.append(Expr(text[j + 2 : end], j + 2))
                j = chunk = end + 1
            else:
                j += 1
        self._blank(chunk, j)
        parts.append(re.sub(r"\\(.)", r"\1", text[chunk:j]))
        self.literals.append(Literal(i, j + 1, tuple(p for p in parts if p != "")))
        return j + 1

    def _regex(self, i: int) -> int:
        text = self.text
        j, in_class = i + 1, False
        while j < len(text):
            c = text[j]
            if c == "\\":
                j += 2
                continue
            if c == "\n":
                return i + 1  # not a regular expression after all: a division
            if c == "[":
                in_class = True
            elif c == "]":
                in_class = False
            elif c == "/" and not in_class:
                break
            j += 1
        self._blank(i + 1, j)
        j += 1
        while j < len(text) and text[j].isalpha():
            j += 1
        return j


# --- one module ---------------------------------------------------------------------------


class JsModule:
    def __init__(self, path: Path, name: str, text: str, modules: JsModules) -> None:
        self.path = path
        self.name = name
        self.text = text
        self.modules = modules
        self.skeleton, self.literals = _Lexer(text).run()
        self._by_start = {literal.start: literal for literal in self.literals}

    def where(self, pos: int) -> str:
        return f"{self.name}:{self.text.count(chr(10), 0, pos) + 1}"

    def literal_at(self, pos: int) -> Literal | None:
        while pos < len(self.text) and self.text[pos].isspace():
            pos += 1
        return self._by_start.get(pos)

    def block_of(self, pos: int) -> tuple[int, int]:
        """The innermost ``{...}`` around ``pos`` (the whole module at the top level)."""
        depth = 0
        for i in range(pos - 1, -1, -1):
            c = self.skeleton[i]
            if c == "}":
                depth += 1
            elif c == "{":
                if depth == 0:
                    return i, self.matching(i)
                depth -= 1
        return 0, len(self.text)

    def matching(self, opener: int) -> int:
        """The position of the bracket that closes the one at ``opener``."""
        depth = 0
        for i in range(opener, len(self.skeleton)):
            c = self.skeleton[i]
            if c in _OPENERS:
                depth += 1
            elif c in _CLOSERS:
                depth -= 1
                if depth == 0:
                    return i
        return len(self.skeleton)

    def statement_end(self, pos: int) -> int:
        """Where the expression starting at ``pos`` ends: a ``;`` or ``,`` outside
        brackets, or the bracket that closes around it."""
        depth = 0
        for i in range(pos, len(self.skeleton)):
            c = self.skeleton[i]
            if c in _OPENERS:
                depth += 1
            elif c in _CLOSERS:
                if depth == 0:
                    return i
                depth -= 1
            elif c in ";," and depth == 0:
                return i
        return len(self.skeleton)

    def declaration(self, name: str, before: int) -> int | None:
        """Where the value of the nearest ``const|let|var name =`` before ``before`` starts,
        if its scope holds ``before``."""
        pattern = re.compile(rf"\b(?:const|let|var)\s+{re.escape(name)}\s*=(?!=)\s*")
        found = [m for m in pattern.finditer(self.skeleton, 0, before)]
        for match in reversed(found):
            start, end = self.block_of(match.start())
            if start <= before <= end:
                return match.end()
        return None

    def function(self, name: str) -> tuple[JsModule, int, int] | None:
        """(module, body start, body end) of ``function name(...) {...}``, here or imported."""
        match = re.search(rf"\bfunction\s+{re.escape(name)}\s*\(", self.skeleton)
        if match is None:
            imported = self.modules.imported(self, name)
            return imported.function(name) if imported else None
        params_end = self.matching(match.end() - 1)
        body = self.skeleton.index("{", params_end)
        return self, body, self.matching(body)

    def constant(self, name: str, before: int) -> tuple[JsModule, int] | None:
        """(module, where its value starts) of the variable ``name`` seen at ``before``."""
        start = self.declaration(name, before)
        if start is not None:
            return self, start
        imported = self.modules.imported(self, name)
        if imported is None:
            return None
        start = imported.declaration(name, len(imported.text))
        return (imported, start) if start is not None else None

    def expression(self, start: int) -> str:
        return self.text[start : self.statement_end(start)].strip()


class JsModules:
    """The web UI's modules, by the path a page imports them with (``/static/app/...``)."""

    def __init__(self, static_dir: Path) -> None:
        self.static_dir = static_dir
        self._modules: dict[Path, JsModule] = {}

    def module(self, path: Path) -> JsModule:
        path = path.resolve()
        if path not in self._modules:
            name = path.relative_to(self.static_dir.resolve()).as_posix()
            text = path.read_text(encoding="utf-8")
            self._modules[path] = JsModule(path, name, text, self)
        return self._modules[path]

    def imported(self, module: JsModule, name: str) -> JsModule | None:
        for match in re.finditer(r'import\s*\{([^}]*)\}\s*from\s*"([^"]+)"', module.text):
            names = {part.split(" as ")[-1].strip() for part in match.group(1).split(",")}
            if name in names and match.group(2).startswith("/static/app/"):
                target = self.static_dir / match.group(2).removeprefix("/static/app/")
                return self.module(target) if target.is_file() else None
        return None


# --- what an address is made of -------------------------------------------------------------


def _resolved(module: JsModule, parts: tuple[Part, ...], depth: int = 0) -> list[Part]:
    """``parts`` with each leading constant or function call replaced by what it holds."""
    out: list[Part] = []
    for part in parts:
        inner = _literal_of(module, part, depth) if isinstance(part, Expr) and not out else None
        if inner is None:
            out.append(part)
        else:
            out.extend(inner)
    merged: list[Part] = []
    for part in out:
        if isinstance(part, str) and merged and isinstance(merged[-1], str):
            merged[-1] += part
        else:
            merged.append(part)
    return merged


def _literal_of(module: JsModule, expr: Expr, depth: int) -> list[Part] | None:
    """What ``expr`` holds when it is a constant or a function returning a literal."""
    if depth > 8:
        return None
    source = expr.source.strip()
    if _WORD.fullmatch(source):
        found = module.constant(source, expr.start)
        if found is None:
            return None
        owner, start = found
        literal = owner.literal_at(start)
        if literal is None or owner.expression(start) != owner.text[literal.start : literal.end]:
            return None
        return _resolved(owner, literal.parts, depth + 1)
    call = re.fullmatch(r"([A-Za-z_$][\w$]*)\((.*)\)", source, re.S)
    if call is None or call.group(1) in {"encodeURIComponent", "String"}:
        return None
    function = module.function(call.group(1))
    if function is None:
        return None
    owner, body_start, body_end = function
    returned = re.search(r"\breturn\s+", owner.skeleton[body_start:body_end])
    if returned is None:
        return None
    literal = owner.literal_at(body_start + returned.end())
    if literal is None:
        return None
    return _resolved(owner, literal.parts, depth + 1)


def _object_keys(source: str) -> list[str]:
    inner = source.strip()
    if not (inner.startswith("{") and inner.endswith("}")):
        raise UnreadableError(f"cannot read the names of {_cut(source)}")
    entries, depth, current = [], 0, ""
    for c in inner[1:-1]:
        if c in _OPENERS:
            depth += 1
        elif c in _CLOSERS:
            depth -= 1
        if c == "," and depth == 0:
            entries.append(current)
            current = ""
        else:
            current += c
    entries.append(current)
    keys = []
    for entry in (e.strip() for e in entries):
        if not entry:
            continue
        match = re.match(r"""(["']?)([\w$-]+)\1\s*(?::|$)""", entry)
        if entry.startswith("...") or match is None:
            raise UnreadableError(f"cannot read the name of the parameter {_cut(entry)}")
        keys.append(match.group(2))
    return keys


def _strings_of_array(module: JsModule, source: str, pos: int, depth: int = 0) -> list[str]:
    """The strings of an array literal (spreads of constant arrays included), or of the
    constant array ``source`` names."""
    source = source.strip()
    if _WORD.fullmatch(source) and depth < 8:
        found = module.constant(source, pos)
        if found is None:
            raise UnreadableError(f"cannot find the list {source}")
        owner, start = found
        return _strings_of_array(owner, owner.expression(start), start, depth + 1)
    if not (source.startswith("[") and source.endswith("]")):
        raise UnreadableError(f"cannot read the list {_cut(source)}")
    values = []
    for item in (i.strip() for i in source[1:-1].split(",")):
        if not item:
            continue
        if item.startswith("..."):
            values += _strings_of_array(module, item[3:], pos, depth + 1)
        elif re.fullmatch(r"\"[^\"]*\"|'[^']*'", item):
            values.append(item[1:-1])
        else:
            raise UnreadableError(f"cannot read {_cut(item)} in a list of names")
    return values


def _loop_values(module: JsModule, name: str, pos: int) -> list[str]:
    loops = list(
        re.finditer(
            rf"\bfor\s*\(\s*(?:const|let|var)\s+{re.escape(name)}\s+of\s+", module.skeleton[:pos]
        )
    )
    if not loops:
        raise UnreadableError(f"cannot tell which names the variable {name} holds")
    start = loops[-1].end()
    return _strings_of_array(module, module.expression(start), start)


def _param_names(module: JsModule, source: str, pos: int, depth: int = 0) -> list[str]:
    """The names the query ``source`` (a URLSearchParams) can hold, seen at ``pos``."""
    source = source.strip()
    if depth > 8:
        raise UnreadableError(f"cannot follow {_cut(source)}")
    made = re.fullmatch(r"new\s+URLSearchParams\(\s*(.*?)\s*\)", source, re.S)
    if made:
        return _object_keys(made.group(1)) if made.group(1) else []
    if _WORD.fullmatch(source):
        start = module.declaration(source, pos)
        if start is None:
            raise UnreadableError(f"cannot find how {source} is made")
        names = _param_names(module, module.expression(start), start, depth + 1)
        _, scope_end = module.block_of(start)
        setters = re.compile(rf"\b{re.escape(source)}\.(?:set|append)\(\s*")
        for setter in setters.finditer(module.skeleton, start, scope_end):
            literal = module.literal_at(setter.end())
            if literal is not None and len(literal.parts) == 1:
                names.append(str(literal.parts[0]))
                continue
            word = _WORD.match(module.text, setter.end())
            if word is None:
                raise UnreadableError(f"cannot read the name set at {module.where(setter.start())}")
            names += _loop_values(module, word.group(0), setter.start())
        return names
    call = re.fullmatch(r"([A-Za-z_$][\w$]*)\((.*)\)", source, re.S)
    if call is not None:
        function = module.function(call.group(1))
        if function is None:
            raise UnreadableError(f"cannot find the function {call.group(1)}")
        owner, body_start, body_end = function
        returned = list(re.finditer(r"\breturn\s+", owner.skeleton[body_start:body_end]))
        if len(returned) != 1:
            raise UnreadableError(f"{call.group(1)} must return its parameters once, at its end")
        start = body_start + returned[0].end()
        return _param_names(owner, owner.expression(start), start, depth + 1)
    raise UnreadableError(f"cannot read the query {_cut(source)}")


def _cut(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def _address(module: JsModule | None, parts: list[Part], where: str) -> ApiCall:
    """The path and the query parameters of an address that begins with /api/v1."""
    path, names, problem = "", [], None
    expecting_name, name = True, ""
    in_query = False
    try:
        for part in parts:
            if not in_query:
                if isinstance(part, Expr):
                    path += HOLE
                    continue
                before, mark, after = part.partition("?")
                path += before.split("#")[0]
                if not mark:
                    continue
                in_query, part = True, after
                if not part:
                    continue
            if isinstance(part, Expr):
                if expecting_name and not name:
                    if module is None:
                        raise UnreadableError("cannot read a query made in a template")
                    names += _param_names(module, part.source, part.start)
                elif expecting_name:
                    raise UnreadableError(f"cannot read a parameter name made by {part.source!r}")
                continue
            for c in part.split("#")[0]:
                if c == "&":
                    if name:
                        names.append(name)
                    expecting_name, name = True, ""
                elif c == "=" and expecting_name:
                    names.append(name)
                    expecting_name, name = False, ""
                elif expecting_name:
                    name += c
        if name:
            names.append(name)
        for segment in path.split("/"):
            if HOLE in segment and segment != HOLE:
                raise UnreadableError(
                    "cannot tell the path: a computed part that is not a whole segment "
                    "(write the whole address in one template literal)"
                )
    except UnreadableError as exc:
        problem = str(exc)
    return ApiCall(where, path, tuple(dict.fromkeys(n for n in names if n)), problem)


def js_calls(static_dir: Path) -> Iterator[ApiCall]:
    """Every API address of the web UI's JavaScript modules."""
    modules = JsModules(static_dir)
    for path in sorted(static_dir.rglob("*.js")):
        module = modules.module(path)
        for literal in module.literals:
            parts = _resolved(module, literal.parts)
            where = module.where(literal.start)
            head = parts[0] if parts else ""
            before = module.skeleton[max(0, literal.start - 40) : literal.start]
            called = _CALLERS.search(before) is not None
            if isinstance(head, str) and head.startswith(API):
                call = _address(module, parts, where)
                glued = re.match(r"\s*\+", module.skeleton[literal.end :])
                if glued and call.problem is None:
                    call = ApiCall(where, call.path, call.params, "the address is glued with +")
                yield call
            elif called and any(isinstance(p, str) and "?" in p for p in parts):
                yield ApiCall(
                    where, "", (), "cannot tell which endpoint this address with a query is for"
                )


# --- templates ----------------------------------------------------------------------------

_SET = re.compile(r"\{%-?\s*set\s+(\w+)\s*=\s*(.*?)\s*-?%\}", re.S)
_WITH = re.compile(r"\{%-?\s*with\s+(.*?)\s*-?%\}", re.S)
_STATEMENT = re.compile(r"\{%.*?%\}", re.S)
_ATTRIBUTE = re.compile(r"""\s[\w:-]+="([^"]*)\"""")
_OUTPUT = re.compile(r"\{\{-?\s*(.*?)\s*-?\}\}|\{%.*?%\}", re.S)


def _split(expression: str, separator: str) -> list[str]:
    """``expression`` cut at each ``separator`` outside quotes and brackets."""
    pieces, current, quote, depth = [], "", "", 0
    for c in expression:
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c in _OPENERS:
            depth += 1
        elif c in _CLOSERS:
            depth -= 1
        elif c == separator and depth == 0:
            pieces.append(current)
            current = ""
            continue
        current += c
    pieces.append(current)
    return pieces


def _jinja_parts(expression: str) -> list[Part]:
    """A Jinja expression ``"a" ~ x ~ "b"`` as parts: its strings, and a hole for the rest."""
    terms = _split(expression, "~")
    parts: list[Part] = []
    for term in (t.strip() for t in terms):
        if re.fullmatch(r"\"[^\"]*\"|'[^']*'", term):
            parts.append(term[1:-1])
        else:
            parts.append(Expr(term, 0))
    return parts


def template_calls(templates_dir: Path) -> Iterator[ApiCall]:
    """Every API address of the templates: in the values of ``{% set %}`` and ``{% with %}``,
    and in attribute values (with the values of the sets in place)."""
    for path in sorted(templates_dir.rglob("*.html")):
        text = path.read_text(encoding="utf-8")
        name = f"templates/{path.relative_to(templates_dir).as_posix()}"
        sets = {m.group(1): _jinja_parts(m.group(2)) for m in _SET.finditer(text)}

        def line(pos: int, name: str = name, text: str = text) -> str:
            return f"{name}:{text.count(chr(10), 0, pos) + 1}"

        values = [(m.start(), sets[m.group(1)]) for m in _SET.finditer(text)]
        for match in _WITH.finditer(text):
            for assignment in _split(match.group(1), ","):
                _, _, expression = assignment.partition("=")
                values.append((match.start(), _jinja_parts(expression.strip())))
        for start, parts in values:
            if parts and isinstance(parts[0], str) and parts[0].startswith(API):
                yield _address(None, parts, line(start))
        # Attributes of the markup: the statements blanked, each kept to its lines.
        markup = _STATEMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
        for match in _ATTRIBUTE.finditer(markup):
            value = html.unescape(match.group(1))
            parts = []
            last = 0
            for output in _OUTPUT.finditer(value):
                parts.append(value[last : output.start()])
                held = sets.get((output.group(1) or "").strip())
                parts.extend(held if held is not None else [Expr(output.group(0), 0)])
                last = output.end()
            parts.append(value[last:])
            merged = _resolved_template(parts)
            if merged and isinstance(merged[0], str) and merged[0].startswith(API):
                yield _address(None, merged, line(match.start()))


def _resolved_template(parts: list[Part]) -> list[Part]:
    merged: list[Part] = []
    for part in parts:
        if part == "":
            continue
        if isinstance(part, str) and merged and isinstance(merged[-1], str):
            merged[-1] += part
        else:
            merged.append(part)
    return merged


def web_calls(static_dir: Path, templates_dir: Path) -> list[ApiCall]:
    return [*js_calls(static_dir), *template_calls(templates_dir)]
