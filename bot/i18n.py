"""Texts in the reader's language: gettext catalogs, one per locale, read with Babel.

Catalogs live in ``bot/locales/<name>/LC_MESSAGES/bot.po``, ``<name>`` being a Discord
locale with ``_`` for ``-`` (``pt_BR``, ``es_419``, ``de``), the gettext convention.
Plural forms come from each catalog's ``Plural-Forms`` header, which Babel writes from
CLDR. A ``bot.mo`` compiled by the build (see README) is used when it is at least as
new as its ``.po``; otherwise the ``.po`` is compiled in memory, so a source checkout
and a freshly edited catalog work without a build step. Each catalog is found and read
once a process, the first time a reader needs it: a catalog edited later is read by the
next start.

Code marks texts with ``N_`` (and ``Nn_`` for plurals) where they are written and
translates them where a reader is known, with ``translator(locale)(message)``.
"""

from __future__ import annotations

import functools
import gettext
import io
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import Translations

from bot.durations import split_duration

__all__ = [
    "DOMAIN",
    "ENGLISH",
    "KEYWORDS",
    "LOCALES",
    "N_",
    "Duration",
    "Message",
    "Nn_",
    "Translator",
    "available",
    "catalog_for",
    "translator",
]

LOCALES = Path(__file__).resolve().parent / "locales"
DOMAIN = "bot"
ENGLISH = "en_US"
"""The catalog of the source language, the last fallback."""
KEYWORDS: Mapping[str, tuple[int, ...]] = {"Nn_": (1, 2), "locale_str": (1,)}
"""Markers beyond Babel's defaults (which include ``N_``): ``pybabel extract -k Nn_:1,2
-k locale_str`` (discord.py's marker for command names, descriptions and choices)."""


@dataclass(frozen=True)
class Message:
    """A text to translate once its reader is known: ``singular`` is the msgid;
    ``plural`` and ``n`` choose a plural form; ``params`` fill its ``{name}`` fields."""

    singular: str
    plural: str | None = None
    n: int = 1
    params: Mapping[str, object] = field(default_factory=dict)

    def __str__(self) -> str:
        """The English text (for logs, and readers nobody knows)."""
        return Translator(ENGLISH, gettext.NullTranslations())(self)


@dataclass(frozen=True)
class Duration:
    """A length of time to show in the reader's units: ``1 h 30 min``, ``1 d``, ``45 s``
    (the way ``/tictactoe-settings`` reads them: ``1h30m``, ``1d``, ``45s``)."""

    seconds: float


def N_(message: str, /, **params: object) -> Message:
    """Mark ``message`` for extraction; translated later, in the reader's locale."""
    return Message(message, params=params)


def Nn_(singular: str, plural: str, n: int, /, **params: object) -> Message:
    """Mark a text with plural forms; ``n`` picks the form and fills ``{n}``."""
    return Message(singular, plural, n, params)


_UNIT_TEXTS = {
    # TRANSLATORS: a number of days, short: "2 d" (with hours, minutes, seconds: "1 d 2 h")
    "d": N_("{n} d"),
    "h": N_("{n} h"),
    "m": N_("{n} min"),
    "s": N_("{n} s"),
}


class Translator:
    """gettext and ngettext for one catalog, filling ``{name}`` fields with str.format."""

    def __init__(self, locale: str, translations: gettext.NullTranslations) -> None:
        self.locale = locale
        self.translations = translations

    def gettext(self, message: str, /, **params: object) -> str:
        text = self.translations.gettext(message)
        return text.format(**self._filled(params)) if params else text

    def ngettext(self, singular: str, plural: str, n: int, /, **params: object) -> str:
        return self.translations.ngettext(singular, plural, n).format(n=n, **self._filled(params))

    def _filled(self, params: Mapping[str, object]) -> dict[str, object]:
        """A field holding a Message (a setting's name in a sentence) or a Duration is
        translated too."""
        return {k: self(v) if isinstance(v, Message | Duration) else v for k, v in params.items()}

    def __call__(self, message: Message | Duration | str) -> str:
        if isinstance(message, str):
            return self.gettext(message)
        if isinstance(message, Duration):
            parts = split_duration(message.seconds)
            return " ".join(self.gettext(_UNIT_TEXTS[unit].singular, n=n) for unit, n in parts)
        if message.plural is None:
            return self.gettext(message.singular, **message.params)
        return self.ngettext(message.singular, message.plural, message.n, **message.params)


@functools.cache
def available() -> frozenset[str]:
    """The names of the catalogs shipped (``de``, ``pt_BR``, ...), found once a process."""
    return frozenset(po.parent.parent.name for po in LOCALES.glob(f"*/LC_MESSAGES/{DOMAIN}.po"))


def catalog_for(locale: str | None, have: frozenset[str] | None = None) -> str:
    """The catalog for a Discord locale, among ``have`` (default: those shipped): the
    same locale (``pt-BR``), else the same language (``es-419`` -> ``es_ES`` if only that
    exists), else English."""
    have = available() if have is None else have
    if not locale:
        return ENGLISH
    name = locale.replace("-", "_")
    language = name.partition("_")[0]
    if name in have:
        return name
    if language in have:
        return language
    same = sorted(have_name for have_name in have if have_name.partition("_")[0] == language)
    return same[0] if same else ENGLISH


@functools.cache
def _load(locales: Path, name: str) -> gettext.NullTranslations:
    folder = locales / name / "LC_MESSAGES"
    po, mo = folder / f"{DOMAIN}.po", folder / f"{DOMAIN}.mo"
    if not po.exists():
        return gettext.NullTranslations()
    if mo.exists() and mo.stat().st_mtime >= po.stat().st_mtime:
        return Translations.load(locales, [name], DOMAIN)
    with po.open("rb") as source:
        catalog = read_po(source, locale=name, domain=DOMAIN)
    compiled = io.BytesIO()
    write_mo(compiled, catalog)
    compiled.seek(0)
    return Translations(compiled, domain=DOMAIN)


@functools.lru_cache(maxsize=256)
def translator(locale: str | None) -> Translator:
    """The texts for a reader whose Discord locale is ``locale`` (None: English).

    Every message drawn starts here, so the answer is kept per locale (Discord has about
    thirty; the bound is for locales stored by hand in the database)."""
    name = catalog_for(locale)
    return Translator(name, _load(LOCALES, name))
