"""``python -m playground`` as a user runs it, through its JSON API: Ctrl-C stops it (and
the bot) cleanly, and the next start with the same folder finds the same server, the same
messages and the same games, whose buttons still work."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from playground.pilot import MARKS, Running, playground


def call(running: Running, path: str, body: dict[str, Any] | None = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        running.url + path.lstrip("/"), data=data, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.load(response)
    except urllib.error.HTTPError as error:
        return {"status": error.code, **json.load(error)}


CELL_IDS = ("ttt:cell:", "ttt:taken:", "ttt:over:")  # free, marked, on a finished board


def cells(message: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []

    def walk(components: list[dict[str, Any]]) -> None:
        for c in components:
            if c["type"] == 2 and c.get("custom_id", "").startswith(CELL_IDS):
                found.append(c)
            walk(c.get("components") or [])

    walk(message["payload"]["components"])
    return found


def marks(message: dict[str, Any]) -> str:
    """The board as a string: X, O, or "." for an empty cell (each cell is one emoji)."""
    return "".join(MARKS.get((c.get("emoji") or {}).get("name"), ".") for c in cells(message))


def test_a_game_survives_a_restart_of_everything(tmp_path: Path) -> None:
    with playground(tmp_path) as first:
        state = call(first, "/api/state")
        alice = next(m["id"] for m in state["members"] if m["name"] == "Alice")
        games = next(c["id"] for c in state["channels"] if c["name"] == "games")
        answer = call(
            first,
            "/api/commands",
            {"as": alice, "channel": games, "name": "tictactoe", "options": {"first": "me"}},
        )
        assert not answer["failed"] and answer["callback_type"] == 4, answer
        board = answer["message"]
        clicked = call(
            first,
            "/api/click",
            {
                "as": alice,
                "message": board["payload"]["id"],
                "custom_id": cells(board)[4]["custom_id"],
            },
        )
        assert clicked["callback_type"] == 7, clicked
        after_one = clicked["message"]
        assert marks(after_one).count("X") == 1 and marks(after_one).count("O") == 1
    assert first.process.returncode == 0, "\n".join(first.output)
    assert "Stopping..." in first.output
    assert (tmp_path / "world.json").exists() and (tmp_path / "tictactoe.db").exists()

    with playground(tmp_path) as second:
        restored = call(second, "/api/state")
        for same in ("server", "bot", "channels", "names"):
            assert restored[same] == state[same], same
        shown = call(second, f"/api/channels/{games}/messages?as={alice}")["messages"]
        again = next(m for m in shown if m["payload"]["id"] == board["payload"]["id"])
        assert marks(again) == marks(after_one)
        free = next(c for c in cells(again) if c["custom_id"].startswith("ttt:cell:"))
        clicked = call(
            second,
            "/api/click",
            {"as": alice, "message": board["payload"]["id"], "custom_id": free["custom_id"]},
        )
        assert not clicked["failed"] and clicked["callback_type"] == 7, clicked
        assert marks(clicked["message"]).count("X") == 2
    assert second.process.returncode == 0, "\n".join(second.output)


def test_the_api_says_what_it_refuses(tmp_path: Path) -> None:
    with playground(tmp_path) as running:
        state = call(running, "/api/state")
        bob = next(m["id"] for m in state["members"] if m["name"] == "Bob")
        games = next(c["id"] for c in state["channels"] if c["name"] == "games")
        refused = call(
            running,
            "/api/commands",
            {"as": bob, "channel": games, "name": "tictactoe-settings", "options": {}},
        )
        assert refused["status"] == 400 and "lacks the permissions" in refused["error"]
        unknown = call(running, "/api/state?as=12345")
        assert unknown["status"] == 404
        bad = call(running, "/api/click", {"as": bob, "message": "1", "custom_id": "x"})
        assert bad["status"] == 404
        offered = call(running, f"/api/commands?as={bob}&channel={games}")
        assert offered["locale"] == "ja"
        names = {c["name"]: c.get("name_localized") for c in offered["chat_input"]}
        assert "tictactoe-settings" not in names and names["tictactoe-leaderboard"] not in (
            None,
            "tictactoe-leaderboard",
        )
