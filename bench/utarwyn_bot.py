"""utarwyn/discord-tictactoe as a bot for ``bench.peer`` (``python -m bench.utarwyn_bot``,
started by the driver): installs the locked npm packages into ``bench/utarwyn`` on first use
(``npm ci``), then becomes ``node bench/utarwyn/run.js`` (``exec``: same process id, so the
driver's /proc figures are node's own).

The package is the npm registry's ``discord-tictactoe`` (discord.js 14) at the version
``bench/utarwyn/package-lock.json`` pins; ``run.js`` points it at the emulator through
discord.js's public options (``rest.api``; the gateway URL comes from ``/gateway/bot``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent / "utarwyn"
COMMAND = "tictactoe"


def install() -> None:
    """``npm ci`` unless the locked packages are there already (the lock is older than
    node_modules' own record of it)."""
    installed = HERE / "node_modules" / ".package-lock.json"
    lock = HERE / "package-lock.json"
    if installed.is_file() and installed.stat().st_mtime >= lock.stat().st_mtime:
        return
    npm = shutil.which("npm")
    if npm is None:
        sys.exit("bench.utarwyn_bot: npm is not on PATH (node 20 and npm are needed)")
    subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=HERE,
        check=True,
        stdout=sys.stderr,
    )


def describe() -> str:
    """The package's version and discord.js's, from the lock file."""
    packages = json.loads((HERE / "package-lock.json").read_text())["packages"]
    own = packages["node_modules/discord-tictactoe"]["version"]
    return (
        f"npm discord-tictactoe {own}, discord.js {packages['node_modules/discord.js']['version']}"
    )


def main() -> None:
    install()
    node = shutil.which("node")
    if node is None:
        sys.exit("bench.utarwyn_bot: node is not on PATH")
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(node, [node, str(HERE / "run.js")])


if __name__ == "__main__":
    main()
