"""What keeps bot/ maintainable across library upgrades, checked on its source.

- Libraries through their front door: no private name of discord.py, aiohttp or aiosqlite
  (nothing starting with ``_``, no module outside their documented API), no replaced
  gateway parsers or serialisation hooks. The one seam is ``use_endpoints`` in
  ``bot/__main__.py``, which points discord.py at ``DISCORD_API_BASE`` and
  ``DISCORD_GATEWAY_URL``.
- Layers: every arrow allowed between our packages is listed (``ARROWS``) and any other
  fails: ``bot.ui`` -> ``bot.service`` (its package only) -> ``bot.store`` (its package
  only); ``engine`` imports nothing of ours, nor discord, asyncio or a database;
  ``discord_emulator`` imports nothing of ours, and ``playground`` only the emulator and
  ``bot.launcher`` (the bot as a process, for tools), which imports nothing of ours;
  models, errors, settings, tunables, refs and i18n (the texts in each reader's language) import
  only each other and the engine; bot/ui calls the service's own methods, never its
  parts; SQL lives in ``bot/store``; and no module imports, directly or not, one that
  imports it.
- Size: no module of bot/, engine/, bench/ or playground/ is over 450 lines.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BOT = ROOT / "bot"
ENGINE = ROOT / "engine"
EMULATOR = ROOT / "discord_emulator"
PLAYGROUND = ROOT / "playground"

LIBRARIES = ("discord", "aiohttp", "aiosqlite")
PUBLIC_MODULES = {
    "discord",
    "discord.app_commands",
    "discord.ext.commands",
    "discord.ext.tasks",
    "discord.ui",
    "aiohttp",
    "aiosqlite",
}
"""The modules of those libraries whose names their documentation lists."""
SEAM = ("bot/__main__.py", "use_endpoints")
SEAM_MODULES = ("discord.http", "discord.gateway")
OVERRIDES = {"to_components", "has_components_v2", "to_component_dict", "parse_interaction_create"}
"""discord.py internals a subclass could replace to change what is sent or parsed."""
STDLIB_UNDERSCORED = {"_exit"}  # os._exit is documented


def sources(folder: Path) -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(folder.rglob("*.py")):
        yield path.relative_to(ROOT).as_posix(), ast.parse(path.read_text(), str(path))


def module_name(relative: str) -> str:
    name = relative.removesuffix(".py").replace("/", ".")
    return name.removesuffix(".__init__")


def dotted(node: ast.expr) -> str | None:
    """``a.b.c`` for an attribute chain on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def enclosing_functions(tree: ast.Module) -> dict[ast.AST, str]:
    """Each node of ``tree`` mapped to the name of the top-level function holding it."""
    owner: dict[ast.AST, str] = {}
    for top in tree.body:
        if isinstance(top, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(top):
                owner[node] = top.name
    return owner


def private_uses(relative: str, tree: ast.Module) -> list[str]:
    found = []
    owner = enclosing_functions(tree)

    def where(node: ast.AST) -> str:
        return f"{relative}:{getattr(node, 'lineno', '?')}"

    for node in ast.walk(tree):
        in_seam = (relative, owner.get(node)) == SEAM
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            root = node.module.split(".")[0]
            submodules = {f"{node.module}.{alias.name}" for alias in node.names}
            public = node.module in PUBLIC_MODULES or submodules <= PUBLIC_MODULES
            if root in LIBRARIES and not public:
                found.append(f"{where(node)} imports from {node.module}")
            for alias in node.names:
                if root in LIBRARIES and alias.name.startswith("_"):
                    found.append(f"{where(node)} imports {node.module}.{alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                root = alias.name.split(".")[0]
                if root in LIBRARIES and alias.name not in PUBLIC_MODULES:
                    found.append(f"{where(node)} imports {alias.name}")
        elif isinstance(node, ast.Attribute):
            name = node.attr
            on_self = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
            dunder = name.startswith("__") and name.endswith("__")
            underscored = name.startswith("_") and not dunder
            if underscored and not on_self and name not in STDLIB_UNDERSCORED:
                found.append(f"{where(node)} uses .{name}")
            chain = dotted(node) or ""
            if chain.startswith(SEAM_MODULES) and not in_seam:
                found.append(f"{where(node)} uses {chain} outside the endpoint seam")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in ("getattr", "setattr", "hasattr", "delattr") and node.args[1:]:
                key = node.args[1]
                if isinstance(key, ast.Constant) and str(key.value).startswith("_"):
                    found.append(f"{where(node)} reaches {key.value!r} by name")
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if node.name in OVERRIDES:
                found.append(f"{where(node)} overrides discord.py's {node.name}")
        elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                root = target
                while isinstance(root, ast.Attribute | ast.Subscript):
                    root = root.value
                if isinstance(root, ast.Name) and root.id in LIBRARIES and not in_seam:
                    found.append(f"{where(node)} assigns into {root.id}")
    return found


def test_bot_uses_only_the_public_api_of_its_libraries() -> None:
    found = [use for relative, tree in sources(BOT) for use in private_uses(relative, tree)]
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    "code",
    [
        "from discord.webhook.async_ import handle_message_parameters",
        "from discord.state import ConnectionState",
        "import discord.enums",
        "x = interaction._state",
        "client._connection.parsers['INTERACTION_CREATE'] = f",
        "discord.VoiceClient.warn_nacl = False",
        "class V:\n    def to_components(self): ...",
        "getattr(db, '_conn')",
        "discord.http.Route.BASE = 'x'",
        "from aiosqlite.core import Connection",
    ],
)
def test_the_scan_catches_private_uses(code: str) -> None:
    assert private_uses("bot/example.py", ast.parse(code))


def test_the_seam_is_allowed_only_where_it_is() -> None:
    code = "def use_endpoints(s):\n    discord.http.Route.BASE = s\n"
    assert not private_uses(SEAM[0], ast.parse(code))
    assert private_uses("bot/other.py", ast.parse(code))


# -- layers and cycles --------------------------------------------------------------------


def imports(relative: str, tree: ast.Module, known: set[str]) -> set[str]:
    """The modules of ``known`` (and outside names, as given) that ``tree`` imports."""
    here = module_name(relative)
    package = here if relative.endswith("__init__.py") else here.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.add(full if full in known else base)
    return found


def graph(folders: tuple[Path, ...] = (BOT, ENGINE, EMULATOR, PLAYGROUND)) -> dict[str, set[str]]:
    trees = {module_name(r): (r, t) for folder in folders for r, t in sources(folder)}
    known = set(trees)
    return {name: imports(r, t, known) for name, (r, t) in trees.items()}


def test_no_import_cycles() -> None:
    # Not the emulator's: its Emulator and the handlers it hands itself to name each other
    # in type hints only (under TYPE_CHECKING).
    found = graph((BOT, ENGINE, PLAYGROUND))
    edges = {
        name: {target for target in targets if target in found} for name, targets in found.items()
    }
    state: dict[str, int] = {}
    path: list[str] = []
    cycles: list[str] = []

    def visit(name: str) -> None:
        state[name] = 1
        path.append(name)
        for target in sorted(edges[name]):
            if state.get(target) == 1:
                cycles.append(" -> ".join([*path[path.index(target) :], target]))
            elif target not in state:
                visit(target)
        path.pop()
        state[name] = 2

    for name in sorted(edges):
        if name not in state:
            visit(name)
    assert not cycles, "\n".join(cycles)


def _starts(names: set[str], *prefixes: str) -> set[str]:
    return {n for n in names if any(n == p or n.startswith(p + ".") for p in prefixes)}


OURS = ("bot", "engine", "discord_emulator", "playground", "tests", "bench")
BASE = (
    "bot.models",
    "bot.errors",
    "bot.settings",
    "bot.tunables",
    "bot.i18n",
    "bot.durations",
    "bot.refs",
)
"""Modules every layer of the bot may use: its data types, errors, settings and texts."""
ARROWS: dict[str, tuple[str, ...]] = {
    # The Discord layer talks to the service's package only (GameService and what it
    # hands out), never to its modules or to the store.
    "bot.ui": ("bot.ui", "bot.service", *BASE, "engine"),
    "bot.service": ("bot.service", "bot.store", *BASE, "engine"),
    "bot.store": ("bot.store", *BASE, "engine"),
    "bot.__main__": ("bot.ui", "bot.service", "bot.store", *BASE),
    "bot.__init__": (),
    "engine": ("engine",),
    "discord_emulator": ("discord_emulator",),  # a Discord of its own, for any bot
    "bot.launcher": ("bot.launcher",),  # the bot as a process, for tools; none of its code
    "playground": ("playground", "discord_emulator", "bot.launcher"),  # runs the bot as one
}
"""Every arrow allowed between our packages: a module of the key's package may import
ours only from these (a key's own modules included); ``BASE`` modules import only each
other and the engine. Anything else fails ``test_layers_import_one_way``."""
EXACT = {"bot.service": "bot.store"}
"""``bot.service`` imports the store's package API only, not its modules."""
OUTSIDE: dict[str, tuple[str, ...]] = {
    "engine": ("discord", "asyncio", "sqlite3", "aiosqlite", "asyncpg", "aiohttp"),
    "bot.store": ("discord",),
    "bot.service": ("discord", "aiohttp", "sqlite3", "aiosqlite", "asyncpg"),
    "bot.models": ("discord", "aiosqlite", "asyncpg"),
}
"""Outside libraries a package must not import (the base modules: as ``bot.models``)."""


def package_of(name: str) -> str | None:
    """The key of ``ARROWS`` (or ``BASE``) ``name`` belongs to."""
    for key in sorted([*ARROWS, *BASE], key=len, reverse=True):
        if name == key or name.startswith(key + "."):
            return key
    return "bot.__init__" if name == "bot" else None


def broken_arrows(edges: dict[str, set[str]]) -> list[str]:
    broken = []
    for name, found in edges.items():
        package = package_of(name)
        if package is None:
            broken.append(f"{name} belongs to no package of ARROWS")
            continue
        allowed = (*BASE, "engine") if package in BASE else ARROWS[package]
        ours = _starts(found, *OURS) - _starts(found, *allowed)
        exact = EXACT.get(package)
        if exact is not None:
            ours |= {n for n in found if n.startswith(exact + ".")}
        if package == "bot.ui":
            ours |= {n for n in found if n.startswith("bot.service.")}
        outside = OUTSIDE.get("bot.models" if package in BASE else package, ())
        ours |= _starts(found, *outside)
        broken.extend(f"{name} imports {target}" for target in sorted(ours))
    return broken


def test_layers_import_one_way() -> None:
    broken = broken_arrows(graph())
    assert not broken, "\n".join(broken)


@pytest.mark.parametrize(
    ("module", "target"),
    [
        ("bot.ui.client", "bot.store"),
        ("bot.pings.notices", "bot.pings.service"),
        ("bot.games.service", "bot.ui.gate"),
        ("bot.games.service", "bot.pings.queries"),
        ("bot.games.queries", "bot.service"),
        ("bot.models", "bot.service"),
        ("bot.refs", "bot.store"),
        ("engine.solver", "bot.models"),
        ("engine.solver", "asyncio"),
        ("playground.pilot", "bot"),
        ("playground.pilot", "bot.ui.client"),
        ("bot.launcher", "bot.ui.client"),
        ("bot.ui.client", "bot.launcher"),
        ("discord_emulator.server", "engine"),
        ("bot.db.sqlite", "discord"),
    ],
)
def test_the_arrows_catch_any_other(module: str, target: str) -> None:
    assert broken_arrows({module: {target}}), f"{module} -> {target} passed"


def test_the_arrows_allow_the_layering() -> None:
    edges = {
        "bot.ui.client": {"bot.service", "bot.models", "bot.refs", "discord"},
        "bot.games.service": {"bot.store", "bot.games.rules", "engine.levels", "asyncio"},
        "bot.games.queries": {"bot.models", "aiosqlite"},
        "bot.refs": {"bot.i18n"},
    }
    assert not broken_arrows(edges)


SQL = re.compile(r"\b(SELECT\s.+\sFROM|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM)\b", re.I)


def test_sql_lives_in_the_store() -> None:
    found = []
    for relative, tree in sources(BOT):
        if relative.startswith("bot/store/"):
            continue
        for node in ast.walk(tree):
            text = node.value if isinstance(node, ast.Constant) else None
            if isinstance(text, str) and SQL.search(text):
                found.append(f"{relative}:{node.lineno}")
    assert not found, "\n".join(found)


MAX_LINES = 450
BENCH = ROOT / "bench"


@pytest.mark.parametrize("folder", [BOT, ENGINE, BENCH, PLAYGROUND], ids=lambda p: p.name)
def test_modules_stay_readable(folder: Path) -> None:
    """A reader can hold a module in their head: a few hundred lines at most."""
    long = {
        path.relative_to(ROOT).as_posix(): n
        for path in folder.rglob("*.py")
        if (n := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert not long, long


# -- the emulator -------------------------------------------------------------------------
# discord_emulator/ is cut along its seams (issue 35): small modules, no import cycle even
# through type hints, no reach into another object's private members, aiohttp's included.


def cycles_in(edges: dict[str, set[str]]) -> list[str]:
    """Every import cycle of ``edges`` found by a depth-first walk, as ``a -> b -> a``."""
    state: dict[str, int] = {}
    path: list[str] = []
    cycles: list[str] = []

    def visit(name: str) -> None:
        state[name] = 1
        path.append(name)
        for target in sorted(edges.get(name, ())):
            if state.get(target) == 1:
                cycles.append(" -> ".join([*path[path.index(target) :], target]))
            elif target not in state:
                visit(target)
        path.pop()
        state[name] = 2

    for name in sorted(edges):
        if name not in state:
            visit(name)
    return cycles


def test_emulator_modules_stay_readable() -> None:
    long = {
        path.relative_to(ROOT).as_posix(): n
        for path in EMULATOR.rglob("*.py")
        if (n := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert not long, long


def test_the_emulator_has_no_import_cycle() -> None:
    """Imports under ``TYPE_CHECKING`` count: a circle of type hints is a circle too."""
    found = graph((EMULATOR,))
    edges = {name: {t for t in targets if t in found} for name, targets in found.items()}
    assert not cycles_in(edges), "\n".join(cycles_in(edges))


def test_the_cycle_scan_sees_type_checking_imports() -> None:
    one = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .two import B\n"
    trees = {"pkg/one.py": ast.parse(one), "pkg/two.py": ast.parse("from .one import A\n")}
    known = {"pkg.one", "pkg.two"}
    edges = {module_name(r): imports(r, t, known) & known for r, t in trees.items()}
    assert cycles_in(edges) == ["pkg.one -> pkg.two -> pkg.one"]


def reaches(relative: str, tree: ast.Module) -> list[str]:
    """``x._name`` where ``x`` is not ``self``/``cls``, ``_name`` fetched or set by name,
    and ``_name`` imported from another module."""
    found = []
    for node in ast.walk(tree):
        where = f"{relative}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Attribute):
            name = node.attr
            on_self = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
            private = name.startswith("_") and not (name.startswith("__") and name.endswith("__"))
            if private and not on_self:
                found.append(f"{where} reaches .{name}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in ("getattr", "setattr", "hasattr", "delattr") and node.args[1:]:
                key = node.args[1]
                if isinstance(key, ast.Constant) and str(key.value).startswith("_"):
                    found.append(f"{where} reaches {key.value!r} by name")
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name.startswith("_") and alias.name != "__future__":
                    found.append(f"{where} imports {node.module}.{alias.name}")
    return found


def test_the_emulator_reaches_into_no_private_member() -> None:
    found = [hit for relative, tree in sources(EMULATOR) for hit in reaches(relative, tree)]
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    "code",
    [
        "handle._fail()",
        "port = site._server.sockets",
        "getattr(runner, '_site')",
        "from .commands import _Resolver",
    ],
)
def test_the_reach_scan_catches(code: str) -> None:
    assert reaches("x.py", ast.parse(code))


def test_the_reach_scan_allows_own_members() -> None:
    assert not reaches("x.py", ast.parse("self._fail()\ncls._cache = {}\nx.__class__\n"))


def test_the_emulator_uses_only_the_public_api_of_aiohttp() -> None:
    """No ``_``-prefixed attribute of aiohttp objects (``site._server``), no name or module
    outside aiohttp's documented API (the port comes from ``AppRunner.addresses``)."""
    found = [hit for relative, tree in sources(EMULATOR) for hit in private_uses(relative, tree)]
    assert not found, "\n".join(found)
