"""The build compiles the gettext catalogs (``bot/locales/*/LC_MESSAGES/bot.po`` to
``bot.mo``) with Babel's ``compile_catalog`` before collecting the package's files, so
a wheel, ``pip install .`` and ``pip install -e .`` all carry compiled catalogs. The
rest of the project's metadata is in pyproject.toml."""

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithCatalogs(build_py):
    def run(self) -> None:
        self.run_command("compile_catalog")
        super().run()


setup(
    cmdclass={"build_py": BuildWithCatalogs},
    options={"compile_catalog": {"directory": "bot/locales", "domain": "bot"}},
)
