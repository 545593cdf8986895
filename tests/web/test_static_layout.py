"""The web UI's ES modules as files (no browser): every import and every template's script or
stylesheet names a file that exists and exports what is imported; shared/ is the bottom
layer (it imports only shared/); the helpers every page uses exist once, in shared/."""

from __future__ import annotations

import re
from pathlib import Path

from scholarstream.web import STATIC_DIR

TEMPLATES = STATIC_DIR.parent / "templates"
PREFIX = "/static/app/"
IMPORT = re.compile(r'import\s*\{([^}]*)\}\s*from\s*"([^"]+)"')
EXPORT = re.compile(
    r"^export (?:async )?(?:function\*?|class|const|let)\s*\*?\s*(\w+)|^export \{([^}]*)\}", re.M
)
SHARED = {
    "api.js": "export async function api(",
    "dom.js": "export function el(",
    "sse.js": "export class SseParser",
    "markdown.js": "export function renderMarkdown(",
}


def _modules() -> dict[str, str]:
    return {
        PREFIX + path.relative_to(STATIC_DIR).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(STATIC_DIR.rglob("*.js"))
    }


def _exports(source: str) -> set[str]:
    names: set[str] = set()
    for single, listed in EXPORT.findall(source):
        if single:
            names.add(single)
        else:
            names.update(n.split(" as ")[-1].strip() for n in listed.split(",") if n.strip())
    return names


def test_every_import_names_an_existing_module_and_export() -> None:
    modules = _modules()
    missing = []
    for path, source in modules.items():
        for names, target in IMPORT.findall(source):
            if target not in modules:
                missing.append(f"{path}: {target} does not exist")
                continue
            exported = _exports(modules[target])
            for name in (n.strip() for n in names.split(",") if n.strip()):
                if name not in exported:
                    missing.append(f"{path}: {target} has no export {name}")
    assert missing == []


def test_every_template_names_existing_static_files() -> None:
    missing = []
    for template in sorted(TEMPLATES.rglob("*.html")):
        text = template.read_text(encoding="utf-8")
        for ref in re.findall(r'(?:src|href)="(/static/app/[^"]+)"', text):
            if not (STATIC_DIR / ref.removeprefix(PREFIX)).is_file():
                missing.append(f"{template.name}: {ref}")
    assert missing == []


def test_shared_modules_import_only_shared_modules() -> None:
    for path, source in _modules().items():
        if path.startswith(PREFIX + "shared/"):
            targets = [target for _, target in IMPORT.findall(source)]
            assert all(t.startswith(PREFIX + "shared/") for t in targets), (path, targets)


def test_the_helpers_every_page_uses_exist_once_in_shared() -> None:
    modules = _modules()
    for name, definition in SHARED.items():
        assert definition in modules[f"{PREFIX}shared/{name}"], name
        # "export async function api(" and "function api(" alike: no second copy elsewhere.
        bare = definition.removeprefix("export ").removeprefix("async ")
        copies = [path for path, source in modules.items() if bare in source]
        assert copies == [f"{PREFIX}shared/{name}"], (name, copies)


def test_each_page_has_its_folder() -> None:
    # The shell (app.js, app.css) is at the top; every other module is in a folder.
    top = {path.name for path in Path(STATIC_DIR).iterdir() if path.is_file()}
    assert top == {"app.js", "app.css"}
    folders = {path.name for path in Path(STATIC_DIR).iterdir() if path.is_dir()}
    assert folders >= {"shared", "chat", "research", "streams", "search", "library", "trials"}
