"""Driving the playground from outside, as a person would: start ``python -m playground``
and use its page in Debian's Chromium through Playwright. The browser test and the
screenshot command (``python -m playground.screenshots``) share these steps.

Playwright is a test requirement, not the bot's: it is imported here only when a browser
is launched. It drives the system's Chromium (``/usr/bin/chromium``, Debian's package);
nothing is downloaded.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Locator, Page

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
READY_WITHIN = 90.0
CELLS = ", ".join(f'button[data-custom-id^="ttt:{kind}:"]' for kind in ("cell", "taken", "over"))
"""A board's cells: free (``cell``), marked (``taken``), or on a finished board (``over``)."""
MARKS = {"\U0001f1fd": "X", "\U0001f17e\ufe0f": "O"}
"""The marks as a cell shows them: each cell is one emoji, 🇽 or 🅾️ (▪️ when empty)."""
WAIT_MS = 15_000
NEWEST_MESSAGE = """() => {
    const all = document.querySelectorAll("#messages article.message");
    return all.length ? all[all.length - 1].dataset.id : null;
}"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Running:
    process: subprocess.Popen[str]
    url: str
    output: list[str]

    def stop(self, within: float = 30.0) -> int:
        """Ctrl-C, as in a terminal; returns the exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        try:
            return self.process.wait(within)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise


@contextlib.contextmanager
def playground(
    data: Path, port: int | None = None, settings: Mapping[str, str] | None = None
) -> Iterator[Running]:
    """``python -m playground --data DATA --port PORT`` until its address line is printed;
    stopped with SIGINT (and waited for) on leaving. ``settings`` are bot settings
    (``TURN_TIMEOUT_SECONDS``...), which the playground passes on to the bot."""
    port = port or free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("DISCORD_")}
    env.update(settings or {})
    process = subprocess.Popen(
        [sys.executable, "-m", "playground", "--data", str(data), "--port", str(port)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    output: list[str] = []
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + READY_WITHIN
    for line in process.stdout:
        output.append(line.rstrip("\n"))
        if line.strip() == url or time.monotonic() > deadline:
            break
    if not output or output[-1].strip() != url:
        process.kill()
        raise RuntimeError("the playground did not start:\n" + "\n".join(output))
    running = Running(process, url, output)
    try:
        yield running
    finally:
        running.stop()
        output.extend(line.rstrip("\n") for line in process.stdout)


@contextlib.contextmanager
def chromium() -> Iterator[Browser]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
        try:
            yield browser
        finally:
            browser.close()


class Client:
    """One page of the playground, acting as whichever member it switches to."""

    def __init__(self, page: Page, url: str) -> None:
        self.page = page
        self.url = url
        page.set_default_timeout(WAIT_MS)

    def open(self) -> Client:
        self.page.goto(self.url)
        self.page.locator("#member-list .member").first.wait_for(state="attached")
        self.page.locator("#messages .message, #messages .empty").first.wait_for()
        return self

    # -- where and who -------------------------------------------------------------------

    def member_id(self, name: str) -> str:
        return str(
            self.page.locator(f'#member-list .member[data-name="{name}"]').get_attribute("data-id")
        )

    def _drawer(self, toggle: str, inside: str) -> None:
        """At phone width lists are drawers: open the one holding ``inside`` if closed."""
        if not self.page.locator(inside).first.is_visible():
            self.page.locator(toggle).click()

    def act_as(self, name: str) -> None:
        self._drawer("#show-members", "#member-list .member")
        self.page.locator(f'#member-list .member[data-name="{name}"]').click()
        active = f'#member-list .member.active[data-name="{name}"]'
        self.page.locator(active).wait_for(state="attached")
        self.page.wait_for_function(
            "name => document.getElementById('me-name').textContent === name", arg=name
        )

    def channel(self, name: str) -> None:
        self._drawer("#show-channels", "#channels .channel")
        self.page.locator("#channels .channel", has_text=name).click()
        self.page.locator("#channels .channel.active", has_text=name).wait_for(state="attached")

    def set_client_language(self, locale: str) -> None:
        self.page.select_option("#me-locale", locale)

    def set_server_language(self, locale: str) -> None:
        self.page.select_option("#server-locale", locale)

    def mention_badge(self, name: str) -> str:
        badge = self.page.locator(f'#member-list .member[data-name="{name}"] .badge')
        return "" if badge.is_hidden() else badge.inner_text()

    # -- commands --------------------------------------------------------------------------

    def offered_commands(self) -> list[str]:
        """The command names the "/" menu shows the acting member."""
        self.page.fill("#command-input", "/")
        self.page.dispatch_event("#command-input", "input")
        names = self.page.locator("#command-menu .command-choice .command-name").all_inner_texts()
        self.page.keyboard.press("Escape")
        return names

    def run(self, command: str, **options: Any) -> None:
        """Type ``/``, pick ``command`` (its default name), fill ``options``, send, and wait
        for the bot's answer to appear. A value starting with ``@`` names a member; others
        are option values as the bot defines them (choices are picked by value, not by
        their translated names)."""
        page = self.page
        newest = page.evaluate(NEWEST_MESSAGE)
        page.fill("#command-input", "/")
        page.dispatch_event("#command-input", "input")
        page.locator(f'#command-menu .command-choice[data-name="{command}"]').click()
        for name, value in options.items():
            field = page.locator(f'#command-form .option[data-option="{name}"]')
            if isinstance(value, str) and value.startswith("@"):
                value = self.member_id(value[1:])
            if field.locator("select").count():
                field.locator("select").select_option(json.dumps(value))
            else:
                field.locator("input").fill(str(value))
        page.locator("#command-send").click()
        page.locator("#command-form").wait_for(state="hidden")
        page.wait_for_function(f"newest => ({NEWEST_MESSAGE})() !== newest", arg=newest)

    # -- messages --------------------------------------------------------------------------

    def messages(self) -> Locator:
        return self.page.locator("#messages article.message")

    def message(self, message_id: str) -> Locator:
        return self.page.locator(f'#messages article.message[data-id="{message_id}"]')

    def last_message(self, has_text: str | None = None, *, with_button: str = "") -> Locator:
        found = self.messages()
        if has_text is not None:
            found = found.filter(has_text=has_text)
        if with_button:
            found = found.filter(has=self.page.locator(f'button[data-custom-id^="{with_button}"]'))
        found.last.wait_for()
        return found.last

    def board(self) -> Locator:
        found = self.messages().filter(has=self.page.locator(CELLS))
        found.last.wait_for()
        return found.last

    def cells(self, board: Locator) -> list[str]:
        """Each cell's mark ("" for an empty one) in order."""
        return [MARKS.get(text.strip(), "") for text in board.locator(CELLS).all_inner_texts()]

    def click(self, message: Locator, *, custom_id_prefix: str = "", label: str = "") -> None:
        if label:
            button = message.locator("button", has_text=label)
        else:
            button = message.locator(f'button[data-custom-id^="{custom_id_prefix}"]')
        button.first.click()

    def forfeit(self) -> None:
        """Forfeit the newest board: its Forfeit asks privately, the question's first
        button confirms."""
        self.click(self.board(), custom_id_prefix="ttt:forfeit:")
        self.click(self.last_message(with_button="ttt:quit:"), custom_id_prefix="ttt:quit:")

    def play_cell(self, index: int) -> None:
        """Click cell ``index`` of the newest board and wait until the board shows it."""
        board = self.board()
        message_id = str(board.get_attribute("data-id"))
        before = sum(1 for mark in self.cells(board) if mark)
        board.locator(CELLS).nth(index).click()
        self.page.wait_for_function(
            """([id, before, cells, shown]) => {
                const board = document.querySelector(`article.message[data-id="${id}"]`);
                if (!board) return false;
                const marks = [...board.querySelectorAll(cells)]
                    .filter((b) => shown.includes(b.textContent.trim())).length;
                return marks > before;
            }""",
            arg=[message_id, before, CELLS, list(MARKS)],
        )

    def free_cells(self) -> list[int]:
        board = self.board()
        buttons = board.locator(CELLS)
        return [
            i
            for i, mark in enumerate(self.cells(board))
            if not mark and buttons.nth(i).is_enabled()
        ]
