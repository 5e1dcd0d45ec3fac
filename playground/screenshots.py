"""``python -m playground.screenshots``: play a few games in a fresh playground and save
what the page shows into docs/images/ (README shows them): a live board, a challenge as
the challenged member sees it, a leaderboard and a review.

Needs what the browser test needs: Debian's ``chromium`` and Playwright from the test
lock. For emoji and Japanese to be drawn (rather than boxes), install fonts too:
``apt-get install fonts-noto-color-emoji fonts-noto-cjk``.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from playwright.sync_api import ViewportSize

from .pilot import Client, chromium, playground

VIEWPORT: ViewportSize = {"width": 1200, "height": 760}


def shoot(client: Client, folder: Path, name: str) -> Path:
    client.page.wait_for_timeout(300)  # let the last redraw settle
    path = folder / f"{name}.png"
    client.page.screenshot(path=str(path))
    print(path)
    return path


def take(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    shots: list[Path] = []
    with (
        tempfile.TemporaryDirectory(prefix="playground-shots-") as data,
        playground(Path(data)) as running,
        chromium() as browser,
    ):
        client = Client(browser.new_page(viewport=VIEWPORT), running.url).open()
        client.act_as("Alice")
        client.channel("games")

        # A game between members, to its end: Bob forfeits.
        client.run("tictactoe", opponent="@Bob", first="me")
        client.act_as("Bob")
        challenge = client.last_message(with_button="ttt:accept:")
        challenge_id = str(challenge.get_attribute("data-id"))
        client.click(challenge, custom_id_prefix="ttt:accept:")
        client.message(challenge_id).locator('button[data-custom-id^="ttt:cell:"]').first.wait_for()
        for who, cell in (("Alice", 4), ("Bob", 0), ("Alice", 2), ("Bob", 6), ("Alice", 3)):
            client.act_as(who)
            client.play_cell(cell)
        client.act_as("Bob")
        client.forfeit()
        client.message(challenge_id).locator('button[data-custom-id^="ttt:review:"]').wait_for()

        # Alice asks for a review of it: an answer only she sees.
        client.act_as("Alice")
        client.click(client.message(challenge_id), custom_id_prefix="ttt:review:")
        client.page.locator("#messages article.message.ephemeral").last.wait_for()
        shots.append(shoot(client, out, "review"))

        client.run("tictactoe-leaderboard")
        client.last_message(with_button="ttt:lb:").wait_for()
        shots.append(shoot(client, out, "leaderboard"))

        # Carol challenges Bob, whose client is in Japanese.
        client.act_as("Carol")
        client.run("tictactoe", opponent="@Bob")
        client.act_as("Bob")
        client.last_message(with_button="ttt:accept:").wait_for()
        shots.append(shoot(client, out, "challenge"))

        # Alice plays the bot, two moves in.
        client.act_as("Alice")
        client.channel("tournament")  # one game per channel: #games holds Carol's challenge
        client.run("tictactoe", difficulty="hard", first="me")
        client.play_cell(4)
        client.play_cell(client.free_cells()[0])
        shots.append(shoot(client, out, "board"))
    return shots


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m playground.screenshots", description=__doc__)
    parser.add_argument(
        "--out", type=Path, default=Path("docs/images"), help="where (default docs/images)"
    )
    take(parser.parse_args().out)


if __name__ == "__main__":
    main()
