"""What keeps bot/ maintainable across library upgrades, checked on its source.

- Libraries through their front door: no private name of discord.py, aiohttp or aiosqlite
  (nothing starting with ``_``, no module outside their documented API), no replaced
  gateway parsers or serialisation hooks. The one seam is ``use_endpoints`` in
  ``bot/__main__.py``, which points discord.py at ``DISCORD_API_BASE`` and
  ``DISCORD_GATEWAY_URL``.
- One folder per feature: bot/ is a thin core (``BASE``: models, errors, configuration,
  refs and i18n; ``bot.db``: the database engines and migrations; ``bot.ui``: the client,
  gate, router and outbox) and the features (``FEATURES``). Every arrow allowed between
  our packages is listed (``ARROWS``) and any other fails: a feature imports the core, the
  engine and games, never another feature (what one needs of another, the composition
  hands it); only a feature's Discord side (``DISCORD_SIDE``) and the core's ``bot.ui``
  import discord.py; the composition (``bot.app``, ``bot.ui.client``,
  ``bot.__main__``) puts the features together; ``engine`` imports nothing of ours, nor
  discord, asyncio or a database; ``discord_emulator`` imports nothing of ours, and
  ``playground`` only the emulator and ``bot.launcher`` (the bot as a process, for
  tools), which imports nothing of ours. SQL lives in the database core and each feature's
  queries; and no module imports, directly or not, one that imports it.
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
    "bot.config",
    "bot.settings",
    "bot.tunables",
    "bot.i18n",
    "bot.durations",
    "bot.refs",
    "bot.reach",
)
"""The core's plain modules, which every part of the bot may use: its data types, errors,
configuration and texts. They import only each other and the engine."""
CORE = (*BASE, "bot.db", "bot.ui")
"""The thin core: ``BASE``, the database engines and the migrations runner (``bot.db``),
and the Discord part every feature plugs into (``bot.ui``: client, gate, router, outbox,
custom_ids)."""
GAMES = "bot.games"
FEATURES = (
    GAMES,
    "bot.challenges",
    "bot.pings",
    "bot.privacy",
    "bot.servers",
    "bot.stats",
    "bot.upkeep",
)
"""One folder per feature: its pure rules, its service, its queries and its Discord side."""
COMPOSITION = ("bot.__main__", "bot.app", "bot.ui.client")
"""Where the features are put together: the entry point, the service that holds every
feature's part (``GameService``), and the client that registers every feature's commands
and buttons."""
ARROWS: dict[str, tuple[str, ...]] = {
    **{base: (*BASE, "engine") for base in BASE},
    "bot.db": (*BASE, "bot.db", "engine"),
    "bot.ui": (*BASE, "bot.ui", "engine"),
    **{feature: (*CORE, GAMES, feature, "bot.app", "engine") for feature in FEATURES},
    **{name: (*CORE, *FEATURES, "bot.app", "engine") for name in COMPOSITION},
    "bot.__init__": (),
    "bot.launcher": ("bot.launcher",),  # the bot as a process, for tools; none of its code
    "engine": ("engine",),
    "discord_emulator": ("discord_emulator",),  # a Discord of its own, for any bot
    "playground": ("playground", "discord_emulator", "bot.launcher"),  # runs the bot as one
}
"""Every arrow allowed between our packages: a module of the key's package may import
ours only from these (its own package included). Features import the core, the engine
and games; their Discord side also takes the ``GameService`` (``bot.app``) to reach its
feature's part (``service.challenges``), and only it (``OUTSIDE``) talks Discord. Anything
else fails ``test_layers_import_one_way``."""
DISCORD_SIDE = {
    "boards",
    "buttons",
    "cog",
    "help",
    "notices",
    "preferences",
    "reposts",
    "road",
    "thread_offer",
    "views",
}
"""The modules of a feature that talk Discord (with its texts, ``render*``): only they
(and the core's ``bot.ui``, and the composition) import discord.py and ``bot.ui``."""
QUERIES = {"queries", "sql", "limits"}
"""The modules of a feature that hold its SQL (and ``*_queries``): they decide nothing."""
OUTSIDE: dict[str, tuple[str, ...]] = {
    "engine": ("discord", "asyncio", "sqlite3", "aiosqlite", "asyncpg", "aiohttp"),
    "bot.models": ("discord", "aiosqlite", "asyncpg", "aiohttp"),
    "bot.db": ("discord", "aiohttp"),
    "feature": ("discord", "aiohttp", "sqlite3", "aiosqlite", "asyncpg", "bot.ui", "bot.app"),
    "discord side": ("sqlite3", "aiosqlite", "asyncpg"),
}
"""Outside libraries (and parts of ours) a part must not import (the base modules: as
``bot.models``; a feature's modules outside its Discord side: as ``feature``, which keeps
its rules, service and queries off Discord and off the composition)."""


def package_of(name: str) -> str | None:
    """The key of ``ARROWS`` ``name`` belongs to."""
    for key in sorted(ARROWS, key=len, reverse=True):
        if name == key or name.startswith(key + "."):
            return key
    return "bot.__init__" if name == "bot" else None


def is_discord_side(name: str) -> bool:
    stem = name.rpartition(".")[2]
    return stem in DISCORD_SIDE or stem.startswith("render")


def outside_rule(name: str, package: str) -> str | None:
    if package in BASE:
        return "bot.models"
    if package in FEATURES:
        return "discord side" if is_discord_side(name) else "feature"
    return package if package in OUTSIDE else None


def broken_arrows(edges: dict[str, set[str]]) -> list[str]:
    broken = []
    for name, found in edges.items():
        package = package_of(name)
        if package is None:
            broken.append(f"{name} belongs to no package of ARROWS")
            continue
        ours = _starts(found, *OURS) - _starts(found, *ARROWS[package])
        rule = outside_rule(name, package)
        ours |= _starts(found, *OUTSIDE.get(rule, ())) if rule else set()
        broken.extend(f"{name} imports {target}" for target in sorted(ours))
    return broken


def test_layers_import_one_way() -> None:
    broken = broken_arrows(graph())
    assert not broken, "\n".join(broken)


@pytest.mark.parametrize(
    ("module", "target"),
    [
        ("bot.ui.gate", "bot.games.service"),
        ("bot.ui.router", "bot.challenges.buttons"),
        ("bot.games.service", "bot.pings.service"),
        ("bot.games.queries", "bot.pings.queries"),
        ("bot.pings.service", "bot.challenges.service"),
        ("bot.upkeep.service", "bot.pings.queries"),
        ("bot.upkeep.service", "bot.privacy.queries"),
        ("bot.servers.cog", "bot.pings.service"),
        ("bot.challenges.service", "bot.ui.gate"),
        ("bot.challenges.service", "discord"),
        ("bot.challenges.service", "bot.app"),
        ("bot.games.rules", "bot.ui.ids"),
        ("bot.stats.reviews", "aiohttp"),
        ("bot.privacy.queries", "discord"),
        ("bot.db.sqlite", "bot.games.queries"),
        ("bot.db.sqlite", "discord"),
        ("bot.models", "bot.db"),
        ("bot.refs", "bot.ui"),
        ("engine.solver", "bot.models"),
        ("engine.solver", "asyncio"),
        ("playground.pilot", "bot"),
        ("playground.pilot", "bot.ui.client"),
        ("bot.launcher", "bot.ui.client"),
        ("bot.ui.client", "bot.launcher"),
        ("discord_emulator.server", "engine"),
    ],
)
def test_the_arrows_catch_any_other(module: str, target: str) -> None:
    assert broken_arrows({module: {target}}), f"{module} -> {target} passed"


def test_the_arrows_allow_the_layering() -> None:
    edges = {
        "bot.ui.client": {"bot.games.service", "bot.challenges.cog", "discord"},
        "bot.app": {"bot.pings.service", "bot.games.service"},
        "bot.challenges.service": {"bot.games.rules", "bot.db.backend", "bot.models", "asyncio"},
        "bot.challenges.buttons": {"bot.ui.router", "bot.games.boards", "discord"},
        "bot.games.queries": {"bot.db.sqlite", "bot.models"},
        "bot.db.sqlite": {"bot.db.backend", "aiosqlite", "bot.errors"},
        "bot.refs": {"bot.i18n"},
    }
    assert not broken_arrows(edges)


SQL = re.compile(r"\b(SELECT\s.+\sFROM|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM)\b", re.I)


def holds_sql(relative: str) -> bool:
    """Whether a module may hold SQL: the database core, and each feature's queries."""
    stem = Path(relative).stem
    return relative.startswith("bot/db/") or stem in QUERIES or stem.endswith("_queries")


def test_sql_lives_in_the_queries() -> None:
    found = []
    for relative, tree in sources(BOT):
        if holds_sql(relative):
            continue
        for node in ast.walk(tree):
            text = node.value if isinstance(node, ast.Constant) else None
            if isinstance(text, str) and SQL.search(text):
                found.append(f"{relative}:{node.lineno}")
    assert not found, "\n".join(found)


def test_each_feature_holds_a_folder() -> None:
    """Nothing of a feature outside its folder: the core and the features are all of bot/."""
    known = {module_name(relative) for relative, _ in sources(BOT)}
    stray = sorted(name for name in known if package_of(name) is None)
    assert not stray, stray


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


# -- bench/ and playground/ watch the emulator from outside ---------------------------------
# They use its public hooks (``subscribers``, ``listeners``, ``observers``): no private
# member of an emulator object, and no attribute of a discord_emulator module or class
# replaced, so the emulator keeps nothing alive for their sake.


def emulator_privates() -> set[str]:
    """Every ``_name`` the emulator defines: private functions, classes, globals, methods
    and attributes (``self._timer = ...``)."""
    names = set()
    for _, tree in sources(EMULATOR):
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = node.name
            elif isinstance(node, ast.Attribute | ast.Name) and isinstance(node.ctx, ast.Store):
                name = node.attr if isinstance(node, ast.Attribute) else node.id
            else:
                continue
            if name.startswith("_") and name != "_" and not name.endswith("__"):
                names.add(name)
    return names


def root_of(node: ast.expr) -> str:
    """``a`` for an attribute chain ``a.b.c``, else ``""``."""
    return (dotted(node) or "").split(".")[0]


def from_emulator(node: ast.AST) -> bool:
    return isinstance(node, ast.ImportFrom) and (node.module or "").startswith("discord_emulator")


def emulator_names(tree: ast.Module) -> set[str]:
    """Names bound to a discord_emulator module or class: imported, or assigned from an
    attribute chain on such a name (``handle_class = interactions.InteractionHandle``)."""
    bound = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and from_emulator(node):
            bound |= {alias.asname or alias.name for alias in node.names}
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("discord_emulator"):
                    bound.add(alias.asname or alias.name.split(".")[0])
    assigns = [node for node in ast.walk(tree) if isinstance(node, ast.Assign)]
    grown = True
    while grown:
        grown = False
        for assign in assigns:
            if root_of(assign.value) in bound:
                for target in assign.targets:
                    if isinstance(target, ast.Name) and target.id not in bound:
                        bound.add(target.id)
                        grown = True
    return bound


def emulator_reaches(relative: str, tree: ast.Module, privates: set[str]) -> list[str]:
    found = []
    bound = emulator_names(tree) - {""}
    by_name = ("getattr", "setattr", "hasattr", "delattr")
    for node in ast.walk(tree):
        where = f"{relative}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Attribute):
            on_self = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
            if node.attr in privates and not on_self:
                found.append(f"{where} reaches the emulator's .{node.attr}")
        elif isinstance(node, ast.ImportFrom) and from_emulator(node):
            found += [f"{where} imports {a.name}" for a in node.names if a.name.startswith("_")]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args[1:]:
            target, key = node.args[0], node.args[1]
            if node.func.id in ("setattr", "delattr") and root_of(target) in bound:
                found.append(f"{where} replaces an attribute of {dotted(target)} by name")
            elif node.func.id in by_name and getattr(key, "value", None) in privates:
                found.append(f"{where} reaches the emulator's {key.value!r} by name")
        elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Attribute) and root_of(target) in bound:
                    found.append(f"{where} replaces {dotted(target)}")
    return found


def test_bench_and_playground_watch_the_emulator_from_outside() -> None:
    privates = emulator_privates()
    found = [
        hit
        for folder in (BENCH, PLAYGROUND)
        for relative, tree in sources(folder)
        for hit in emulator_reaches(relative, tree, privates)
    ]
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    "code",
    [
        "original = emu._changed",
        "handle._timer.cancel()",
        "getattr(emu, '_new_interaction')",
        "from discord_emulator.server import _read_body",
        "from discord_emulator import gateway\ngateway.encode_json = encode",
        "from discord_emulator import interactions as i\nk = i.InteractionHandle\nk.fail = f",
        "from discord_emulator import InteractionHandle\nInteractionHandle.acknowledge = f",
        "import discord_emulator.server\nsetattr(discord_emulator.server, 'read_body', f)",
    ],
)
def test_the_outside_scan_catches(code: str) -> None:
    assert emulator_reaches("x.py", ast.parse(code), emulator_privates())


def test_the_outside_scan_allows_public_hooks_and_own_members() -> None:
    code = (
        "from discord_emulator import Emulator\nemu = Emulator()\nemu.ack_deadline = 30.0\n"
        "emu.observers.append(self._observe)\nself._changed = asyncio.Event()\n"
    )
    assert not emulator_reaches("x.py", ast.parse(code), emulator_privates())
