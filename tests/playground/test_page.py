"""The playground's page in a real browser (Debian's Chromium through Playwright), against
``python -m playground`` and the real bot: a game against the bot to its end, and a
challenge between a member whose client speaks English and one whose client speaks
Japanese, checking what each of them sees.

Marked ``browser``: it runs in the default suite where ``/usr/bin/chromium`` exists (CI
installs it), and is skipped elsewhere unless CI is set, when a missing browser fails.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from bot.errors import NotAPlayer, NotYourTurn
from bot.i18n import N_, translator
from playground.pilot import CELLS, CHROMIUM, Client, Running, chromium, playground

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser

if not Path(CHROMIUM).exists():
    if os.environ.get("CI"):
        raise RuntimeError(f"{CHROMIUM} is missing: .ci/run installs Debian's chromium")
    pytest.skip(f"no {CHROMIUM} (apt-get install chromium)", allow_module_level=True)

EN, JA, FR = translator("en-US"), translator("ja"), translator("fr")
QUICK_TURNS = {"TURN_TIMEOUT_SECONDS": "40", "SWEEP_INTERVAL_SECONDS": "1"}
"""A turn's notice goes to a player who let it wait a fifth of the clock: 8 s here."""
JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    with playground(tmp_path_factory.mktemp("playground"), settings=QUICK_TURNS) as started:
        yield started
    assert started.process.returncode == 0, "\n".join(started.output)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


@pytest.fixture(scope="module")
def client(running: Running, browser: Browser) -> Iterator[Client]:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield Client(page, running.url).open()
    assert not errors, errors


def test_a_game_against_the_bot_to_its_end(client: Client) -> None:
    client.act_as("Alice")
    client.channel("games")
    client.run("tictactoe", difficulty="impossible", first="me")
    board = client.board()
    assert "Alice" in board.inner_text()
    assert board.locator(".used-command").inner_text() == "Alice used /tictactoe"
    client.play_cell(4)
    # Empty or taken, every cell is one emoji: all as wide, so the columns line up.
    boxes = [cell.bounding_box() for cell in client.board().locator(CELLS).all()]
    assert len(boxes) == 9 and all(box is not None for box in boxes), boxes
    assert len({round(box["width"]) for box in boxes if box}) == 1, boxes
    for column in range(3):
        assert len({round(box["x"]) for box in boxes[column::3] if box}) == 1, boxes
    for _ in range(4):
        free = client.free_cells()
        if not free:
            break
        client.play_cell(free[0])
    board = client.board()
    text = board.inner_text()
    assert EN(N_("A draw.")) in text or EN(N_("I won.")) in text, text
    cells = client.cells(board)
    assert cells.count("X") >= 3 and set(cells) <= {"X", "O", ""}, cells
    assert board.locator('button[data-custom-id^="ttt:cell:"]:enabled').count() == 0
    rematch = board.locator("button.primary", has_text=EN(N_("Rematch")))
    assert rematch.is_enabled() and rematch.locator(".emoji").inner_text() == "🔁"
    # the turn's deadline is a <t:...:R> timestamp: the final board no longer has one
    assert board.locator(".timestamp").count() == 0


def test_a_challenge_between_members_in_two_languages(client: Client) -> None:
    page = client.page
    client.act_as("Bob")
    client.set_client_language("ja")
    bob_commands = client.offered_commands()
    assert any(JAPANESE.search(name) for name in bob_commands), bob_commands
    assert "/tictactoe-settings" not in bob_commands  # Manage Server only
    client.act_as("Alice")
    assert "/tictactoe-settings" in client.offered_commands()
    client.channel("games")

    client.run("tictactoe", opponent="@Bob", first="me")
    challenge = client.last_message(with_button="ttt:accept:")
    assert "@Bob" in challenge.inner_text() and "@Alice" in challenge.inner_text()
    assert "highlighted" not in (challenge.get_attribute("class") or "")
    page.wait_for_function(
        "() => document.querySelector('.member[data-name=\"Bob\"] .badge').textContent === '1'"
    )

    client.act_as("Bob")  # Bob reads #games: the mention is his, and then read
    challenge = client.last_message(with_button="ttt:accept:")
    assert "highlighted" in (challenge.get_attribute("class") or "")
    countdown = challenge.locator(".timestamp").first
    assert JAPANESE.search(countdown.inner_text()), countdown.inner_text()  # 「…秒後」
    page.locator('.member[data-name="Bob"] .badge').wait_for(state="hidden")
    challenge_id = str(challenge.get_attribute("data-id"))
    client.click(challenge, custom_id_prefix="ttt:accept:")
    board = client.message(challenge_id)  # the board replaces the challenge
    board.locator('button[data-custom-id^="ttt:cell:"]').first.wait_for()

    # Bob moves out of turn: the bot answers him alone, in his language
    board.locator('button[data-custom-id^="ttt:cell:"]').nth(4).click()
    refusal = client.last_message(JA(NotYourTurn.default_message))
    assert "ephemeral" in (refusal.get_attribute("class") or "")
    note = refusal.locator(".ephemeral-note").inner_text()
    assert page_text(page, "onlyYou", "ja") in note and JAPANESE.search(note), note

    client.act_as("Alice")
    assert client.messages().filter(has_text=JA(NotYourTurn.default_message)).count() == 0
    assert page.locator("#messages .ephemeral-note").count() == 0
    notice = page.locator("#messages article.message.highlighted").last
    notice.wait_for(timeout=30_000)  # Alice let her turn wait: the bot tells her
    assert "@Alice" in notice.inner_text() and "@Bob" in notice.inner_text()
    notice.locator(".message-link").click()  # "#games › 💬": the board it is about
    page.locator("#messages article.message.flash").wait_for()
    client.play_cell(0)
    client.act_as("Bob")
    client.play_cell(4)
    client.act_as("Alice")
    client.play_cell(8)

    client.act_as("Bob")
    board = client.board()
    client.forfeit()
    page.wait_for_function(
        """id => {
            const b = document.querySelector(`article.message[data-id="${id}"]`);
            return b && b.querySelector('button[data-custom-id^="ttt:review:"]');
        }""",
        arg=board.get_attribute("data-id"),
    )
    board = client.board()
    final = board.inner_text()
    assert "@Alice" in final and "@Bob" in final
    assert client.cells(board) == ["X", "", "", "", "O", "", "", "", "X"]
    assert EN(N_("Review")) in final and EN(N_("Rematch")) in final  # the server's language

    client.act_as("Alice")
    seen_by_alice = client.board()
    assert seen_by_alice.get_attribute("data-id") == board.get_attribute("data-id")
    assert client.cells(seen_by_alice) == ["X", "", "", "", "O", "", "", "", "X"]
    # the game's end deleted its turn notice, and the page dropped it without a reload
    assert page.locator("#messages .message-link").count() == 0
    assert page.evaluate("() => performance.getEntriesByType('navigation').length") == 1


def page_text(page: Page, key: str, locale: str) -> str:
    """The page's own words (static/texts.js) in ``locale``."""
    return str(page.evaluate("([key, locale]) => Texts.tr(key, {}, locale)", [key, locale]))


def test_the_page_speaks_the_acting_members_language(client: Client) -> None:
    page = client.page
    seen = {}
    for name, locale in (("Bob", "ja"), ("Carol", "fr"), ("Alice", "en-US")):
        client.act_as(name)
        assert page.locator("#me-locale").input_value() == locale
        page.wait_for_function("locale => document.documentElement.lang === locale", arg=locale)
        heading = page.locator("#members .section-title").first.inner_text()
        hint = page.locator("#members .hint").inner_text()
        seen[name] = (heading, hint, page.locator("#command-input").get_attribute("placeholder"))
        assert heading.casefold() == page_text(page, "membersActAs", locale).casefold()
        assert hint == page_text(page, "membersHint", locale)
    assert JAPANESE.search("".join(map(str, seen["Bob"]))), seen["Bob"]
    assert seen["Carol"][0].casefold() == "membres — agir en tant que", seen["Carol"]
    assert seen["Alice"][0].casefold() == "members — act as", seen["Alice"]
    # the client language switches them too, at once
    client.set_client_language("fr")
    page.wait_for_function(
        "() => document.querySelector('#members .hint').textContent.startsWith('Cliquez')"
    )
    client.set_client_language("en-US")
    page.wait_for_function("() => document.documentElement.lang === 'en-US'")


def test_the_moderator_opens_the_settings(client: Client) -> None:
    """Carol's Moderator role holds Manage Messages and Manage Server, as a server's
    moderators usually do: she may open /tictactoe-settings (Bob may not)."""
    client.act_as("Carol")
    client.channel("general")
    carol = client.page.locator('#member-list .member[data-name="Carol"]')
    assert "MANAGE_GUILD" in str(carol.get_attribute("title"))
    client.run("tictactoe-settings")
    answer = client.last_message(FR(N_("Tic-tac-toe on this server")))
    assert "ephemeral" in (answer.get_attribute("class") or "")
    assert client.page.locator("#composer-error").is_hidden()


def test_the_bot_is_a_member_with_its_apps_menu(client: Client) -> None:
    page = client.page
    client.act_as("Alice")
    client.channel("tournament")
    bot = page.locator("#bot-list .member.bot")
    assert "APP" in bot.inner_text()
    assert page.locator('#member-list .member[data-name="Tic-Tac-Toe"]').count() == 0
    bot.click(button="right")
    menu = page.locator("#context-menu")
    menu.wait_for()
    assert menu.locator(".menu-item.act").count() == 0  # nobody acts as the bot
    app = menu.locator(".menu-item.app")
    assert app.inner_text() == "Challenge to tic-tac-toe"
    app.click()
    board = client.board()  # Apps > Challenge, on the bot: a game against it
    assert "Alice" in board.inner_text()
    assert board.locator('button[data-custom-id^="ttt:cell:"]').count() > 0


def test_at_phone_width_the_chat_stays_and_a_move_can_be_played(
    running: Running, browser: Browser
) -> None:
    page = browser.new_page(viewport={"width": 375, "height": 740}, has_touch=True)
    try:
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        client = Client(page, running.url).open()
        chat = page.locator("#chat").bounding_box()
        assert chat is not None and chat["width"] >= 370, chat
        assert page.locator("#command-input").is_visible()
        assert not page.locator("#member-list").is_visible()  # a drawer, closed

        client.act_as("Bob")  # from the members' drawer
        page.wait_for_function("() => !document.body.dataset.drawer")  # it closed
        client.channel("general")  # from the channels' drawer
        page.wait_for_function("() => !document.body.dataset.drawer")
        assert page.locator("#chat").bounding_box() == chat

        client.run("tictactoe", difficulty="easy", first="me")
        client.play_cell(4)
        board = client.board()
        played = board.locator(CELLS).nth(4).get_attribute("data-custom-id")
        assert not str(played).startswith("ttt:cell:"), played  # no longer a free cell
        cell = board.locator('button[data-custom-id^="ttt:"]').first.bounding_box()
        assert cell is not None and cell["height"] >= 40 and cell["width"] >= 40, cell
        box = board.bounding_box()
        assert box is not None and box["x"] + box["width"] <= 375, box

        # a long press on the bot opens its menu, as on Discord's phone app
        page.locator("#show-members").click()
        bot = page.locator("#bot-list .member.bot")
        bot.dispatch_event("pointerdown", {"pointerType": "touch", "clientX": 200, "clientY": 250})
        menu = page.locator("#context-menu")
        menu.wait_for()
        assert menu.locator(".menu-item.app").inner_text() == JA(N_("Challenge to tic-tac-toe"))
        bot.dispatch_event("pointerup", {"pointerType": "touch"})
        page.keyboard.press("Escape")
        assert not errors, errors
    finally:
        page.close()


def test_the_member_menu_offers_the_bots_user_commands(client: Client) -> None:
    client.act_as("Alice")
    client.page.locator('#member-list .member[data-name="Carol"]').click(button="right")
    menu = client.page.locator("#context-menu")
    menu.wait_for()
    assert menu.locator(".menu-title").first.text_content() == "Carol"
    # Apps offers the bot's one user command, in Alice's language
    apps = menu.locator(".menu-item.app")
    assert apps.count() == 1 and apps.inner_text() == "Challenge to tic-tac-toe", apps.inner_text()
    menu.locator(".menu-item", has_text="Act as Carol").click()
    client.page.locator('#member-list .member.active[data-name="Carol"]').wait_for()
    assert client.page.locator("#me-locale").input_value() == "fr"


def test_new_messages_follow_the_server_language(client: Client) -> None:
    client.act_as("Alice")
    client.set_server_language("ja")
    client.page.wait_for_function("() => document.getElementById('server-locale').value === 'ja'")
    client.run("tictactoe-leaderboard")
    board = client.last_message(JA(N_("Leaderboard · page {page}/{pages}", page=1, pages=1)))
    assert "@Alice" in board.inner_text() and "@Bob" in board.inner_text()
    client.set_server_language("en-US")


def test_message_text_cannot_become_markup(client: Client) -> None:
    hostile = (
        '<img src=x onerror="window.hacked=1"> **bold** <script>window.hacked=2</script>'
        " [x](javascript:window.hacked=3) <t:0:R> <@1>"
    )
    drawn = client.page.evaluate(
        """text => {
            const node = Markdown.markdown(text, {names: {users: {}, roles: {}, channels: {}},
                me: "", locale: "en-US", guild: "", jump: () => {}});
            return {html: node.innerHTML, hrefs: [...node.querySelectorAll("a")].map(a => a.href),
                    elements: [...node.querySelectorAll("*")].map(e => e.tagName.toLowerCase())};
        }""",
        hostile,
    )
    assert not {"img", "script"} & set(drawn["elements"]), drawn
    assert "<strong>bold</strong>" in drawn["html"] and "&lt;img" in drawn["html"]
    assert not any(href.startswith("javascript") for href in drawn["hrefs"]), drawn
    assert client.page.evaluate("() => window.hacked === undefined")


def test_components_are_drawn_from_the_payload_and_unknown_ones_said(client: Client) -> None:
    drawn = client.page.evaluate(
        """components => {
            const ctx = {names: {users: {}, roles: {}, channels: {}}, me: "", locale: "en-US",
                         guild: "", jump: () => {}};
            const node = Client.drawComponents(components, ctx, "1");
            const buttons = [...node.querySelectorAll("button")].map(b => ({
                text: b.textContent, cls: b.className, disabled: b.disabled}));
            return {buttons, text: node.textContent,
                    container: node.querySelector(".container").style.borderLeftColor,
                    section: node.querySelectorAll(".section .accessory button").length,
                    separators: node.querySelectorAll(".separator").length,
                    headers: node.querySelectorAll("h3").length};
        }""",
        [
            {
                "type": 17,
                "accent_color": 0x5865F2,
                "components": [
                    {"type": 10, "content": "### Title\n**bold** <t:0:D>"},
                    {"type": 14, "divider": True, "spacing": 1},
                    {
                        "type": 9,
                        "components": [{"type": 10, "content": "a section"}],
                        "accessory": {"type": 2, "style": 3, "label": "Go", "custom_id": "go"},
                    },
                    {
                        "type": 1,
                        "components": [
                            {"type": 2, "style": 4, "label": "Stop", "custom_id": "s"},
                            {
                                "type": 2,
                                "style": 2,
                                "emoji": {"name": "🔁"},
                                "label": "Again",
                                "custom_id": "a",
                                "disabled": True,
                            },
                        ],
                    },
                    {"type": 99, "whatever": True},
                ],
            }
        ],
    )
    assert drawn["buttons"] == [
        {"text": "Go", "cls": "btn success", "disabled": False},
        {"text": "Stop", "cls": "btn danger", "disabled": False},
        {"text": "🔁Again", "cls": "btn secondary", "disabled": True},
    ]
    assert drawn["container"] == "rgb(88, 101, 242)" and drawn["section"] == 1
    assert drawn["separators"] == 1 and drawn["headers"] == 1
    assert "Unknown component (type 99)" in drawn["text"]
    assert "1970" in drawn["text"] or "1969" in drawn["text"]  # <t:0:D>, as a date


GROUP_DM = "Alice, Bob, Carol"


def test_a_challenge_in_the_group_dm_to_its_end(client: Client) -> None:
    """Alice installed the app to her account; Bob and Carol never did. In their group DM
    the bot is no member: Alice challenges Bob, Bob accepts and they play to the end, all
    through interactions; Carol's click is refused to her alone."""
    page = client.page
    client.act_as("Bob")
    client.channel(GROUP_DM)
    assert "/tictactoe" not in client.offered_commands()  # Bob has no install of his own
    client.act_as("Alice")
    client.channel(GROUP_DM)
    header = page.locator("#channel-header").get_attribute("title") or ""
    assert header == page_text(page, "privateHelp", "en-US"), header
    assert "/tictactoe" in client.offered_commands()
    client.run("tictactoe", opponent="@Bob", first="me")
    challenge = client.last_message(with_button="ttt:accept:")
    assert "@Bob" in challenge.inner_text()
    challenge_id = str(challenge.get_attribute("data-id"))

    client.act_as("Bob")
    client.channel(GROUP_DM)
    client.click(client.message(challenge_id), custom_id_prefix="ttt:accept:")
    client.board().locator('button[data-custom-id^="ttt:cell:"]').first.wait_for()

    client.act_as("Carol")  # not a player: refused, and only she sees it
    client.channel(GROUP_DM)
    client.board().locator('button[data-custom-id^="ttt:cell:"]').nth(4).click()
    refusal = client.last_message(FR(NotAPlayer.default_message))
    assert "ephemeral" in (refusal.get_attribute("class") or "")

    for player, cell in (("Alice", 0), ("Bob", 3), ("Alice", 1), ("Bob", 4), ("Alice", 2)):
        client.act_as(player)
        client.channel(GROUP_DM)
        client.play_cell(cell)
    page.wait_for_function(
        """() => {
            const boards = [...document.querySelectorAll("#messages article.message")]
                .filter((b) => b.querySelector('button[data-custom-id^="ttt:review:"]'));
            return boards.length > 0;
        }"""
    )
    board = client.board()
    assert client.cells(board) == ["X", "X", "X", "O", "O", "", "", "", ""]
    assert board.locator('button[data-custom-id^="ttt:cell:"]:enabled').count() == 0
    assert "@Alice" in board.inner_text()
    client.act_as("Carol")  # the whole group sees the end
    client.channel(GROUP_DM)
    assert client.cells(client.board()) == ["X", "X", "X", "O", "O", "", "", "", ""]
    assert client.messages().filter(has_text=FR(NotAPlayer.default_message)).count() == 1
