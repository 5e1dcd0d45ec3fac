"""The build compiles the gettext catalogs (``bot/locales/*/LC_MESSAGES/bot.po`` to
``bot.mo``) with Babel's ``compile_catalog`` before collecting the package's files, so
a wheel, ``pip install .`` and ``pip install -e .`` all carry compiled catalogs.

It also copies the top-level ``migrations/`` (SQLite's ``*.sql``, PostgreSQL's in
``postgresql/``) into the built package as ``bot/migrations/``, where
``bot.db.migrate`` looks first: an installed bot finds them without a top-level
``migrations`` package in site-packages. The rest of the metadata is in pyproject.toml."""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

MIGRATIONS = Path(__file__).resolve().parent / "migrations"


class BuildWithCatalogs(build_py):
    def run(self) -> None:
        self.run_command("compile_catalog")
        super().run()
        if self.editable_mode:  # an editable install reads the checkout's migrations/
            return
        for source in sorted(MIGRATIONS.rglob("*.sql")):
            target = Path(self.build_lib, "bot", "migrations", source.relative_to(MIGRATIONS))
            self.mkpath(str(target.parent))
            self.copy_file(str(source), str(target))


setup(
    cmdclass={"build_py": BuildWithCatalogs},
    options={"compile_catalog": {"directory": "bot/locales", "domain": "bot"}},
)
