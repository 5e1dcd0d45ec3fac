"""Erasure on request, end to end: ``/tictactoe-forget-me`` and ``/tictactoe-forget-server``,
their confirm buttons, and what members see afterwards.

The module's last test erases the whole (module's own) server, so it runs last here.
"""

from __future__ import annotations

import asyncio

import pytest

from discord_emulator import (
    ButtonStyle,
    CallbackType,
    Channel,
    Message,
    Permission,
    User,
    UserActionError,
)

from .helpers import Arena, edited_through_channel, refusal

pytestmark = pytest.mark.asyncio(loop_scope="module")
POSTGRESQL = True  # the privacy module on PostgreSQL too (tests/e2e/conftest.py)

CONFIRM_SECONDS = 300  # bot.privacy.service.CONFIRM_SECONDS, as a user is told it


async def ask(arena: Arena, user: User, channel: Channel, command: str) -> Message:
    """Run an erasure command; its answer must be a private question with Erase and Cancel."""
    answer = await arena.command(user, channel, command)
    assert answer.type is CallbackType.CHANNEL_MESSAGE_WITH_SOURCE, answer
    question = answer.message
    assert question.ephemeral and question.visible_for(user), question
    assert question.pings.nobody
    erase, cancel = question.buttons()
    assert erase.label.startswith("Erase") and erase.style == ButtonStyle.DANGER, erase
    assert cancel.label == "Cancel" and not erase.disabled and not cancel.disabled
    assert f"work for {CONFIRM_SECONDS // 60} minutes" in question.text, question.text
    return question


async def stats(arena: Arena, viewer: User, channel: Channel, member: User) -> str:
    answer = await arena.command(viewer, channel, "tictactoe-stats", member=member)
    return answer.message.text


async def leaderboard(arena: Arena, viewer: User, channel: Channel) -> str:
    return (await arena.command(viewer, channel, "tictactoe-leaderboard")).message.text


async def test_a_member_erases_their_data_after_confirming(arena: Arena) -> None:
    alice, bob, carol = arena.member("alice"), arena.member("bob"), arena.member("carol")
    channel, other = arena.channel(), arena.channel()
    await arena.quick_game(alice, bob, channel)  # Alice wins, rated
    challenge = await arena.challenge(alice, carol, other)
    assert f"<@{alice.id}>" in await leaderboard(arena, bob, channel)
    before = await stats(arena, bob, channel, alice)
    assert "1W 0L 0D" in before, before

    question = await ask(arena, alice, channel, "tictactoe-forget-me")
    assert "your rating (1520)" in question.text and "1 past game" in question.text
    assert "Other members' ratings don't change" in question.text
    # Bob can't see Alice's question; a forged click on it is refused and changes nothing.
    with pytest.raises(UserActionError):
        await arena.emu.click(bob, question, label="Erase my data")
    erase_id = question.buttons()[0].custom_id
    assert erase_id == f"ttt:forget:me:{alice.id}"
    text = await refusal(await arena.raw_click(bob, question, erase_id))
    assert "isn't yours" in text and "nothing was changed" in text
    assert await stats(arena, bob, channel, alice) == before
    bob_before = await stats(arena, carol, channel, bob)

    answer = await arena.click(alice, question, label="Erase my data")
    assert answer.type is CallbackType.UPDATE_MESSAGE, answer
    done = arena.current(question)
    assert done.text.startswith("🗑️ Done") and not done.buttons(), done.text
    assert "1 pending challenge withdrawn" in done.text

    # Her pending challenge is withdrawn on its message (edited through the channel).
    await arena.emu.wait_for(lambda: edited_through_channel(arena.emu, challenge))
    withdrawn = arena.current(challenge)
    assert "A deleted member withdrew the challenge" in withdrawn.text, withdrawn.text
    assert all(button.disabled for button in withdrawn.buttons())
    # Her standing is gone; Bob's is the same, and his history names a deleted member.
    fresh = await stats(arena, bob, channel, alice)
    assert "1500" in fresh and "unranked" in fresh and "Recent games" not in fresh, fresh
    bob_after = await stats(arena, carol, channel, bob)
    # The same rating and record; one rank up, with Alice off the leaderboard.
    expected = bob_before.replace(" · #2", " · #1").replace(f"<@{alice.id}>", "a deleted member")
    assert bob_after == expected
    assert "lost to a deleted member" in bob_after, bob_after
    assert f"<@{alice.id}>" not in await leaderboard(arena, bob, channel)


async def test_cancel_and_late_clicks_change_nothing(arena: Arena) -> None:
    alice, bob = arena.member("alice"), arena.member("bob")
    channel = arena.channel()
    await arena.quick_game(alice, bob, channel)
    before = await stats(arena, bob, channel, alice)

    question = await ask(arena, alice, channel, "tictactoe-forget-me")
    cancel_id = f"ttt:forget-cancel:{alice.id}"
    assert question.buttons()[1].custom_id == cancel_id
    text = await refusal(await arena.raw_click(bob, question, cancel_id))
    assert "isn't yours" in text
    answer = await arena.click(alice, question, label="Cancel")
    assert answer.type is CallbackType.UPDATE_MESSAGE
    cancelled = arena.current(question)
    assert cancelled.text == "Cancelled; nothing was erased." and not cancelled.buttons()
    assert await stats(arena, bob, channel, alice) == before

    # A question clicked after five minutes (on Discord's clock) is refused.
    late = await ask(arena, alice, channel, "tictactoe-forget-me")
    arena.emu.advance(CONFIRM_SECONDS + 5)
    text = await refusal(await arena.click(alice, late, label="Erase my data"))
    assert "expired" in text and "nothing was erased" in text, text
    assert await stats(arena, bob, channel, alice) == before


async def test_a_live_game_is_in_the_way(arena: Arena) -> None:
    alice, bob = arena.member("alice"), arena.member("bob")
    channel = arena.channel()
    board = await arena.member_game(alice, bob, channel)
    link = f"https://discord.com/channels/{arena.guild.id}/{channel.id}/{board.id}"
    answer = await arena.command(bob, channel, "tictactoe-forget-me")
    text = await refusal(answer)
    assert f"You have 1 game in progress: {link}." in text, text
    assert "Nothing was erased" in text
    await arena.forfeit(alice, board)
    await ask(arena, bob, channel, "tictactoe-forget-me")  # now it may go ahead


async def test_only_a_server_manager_erases_the_server(arena: Arena) -> None:
    member = arena.member("member")
    moderator = arena.member("moderator", permissions=Permission.MANAGE_GUILD)
    alice, bob = arena.member("alice"), arena.member("bob")
    channel = arena.channel()
    board = await arena.member_game(alice, bob, channel)
    await arena.move(alice, board, 4)
    await arena.move(bob, board, 0)
    await arena.forfeit(bob, board)

    # Discord doesn't offer the command to a member without Manage Server; nor does a
    # forged confirmation from them erase anything.
    with pytest.raises(UserActionError, match="lacks the permissions"):
        await arena.emu.run_command(member, channel, "tictactoe-forget-server")
    own = await ask(arena, member, channel, "tictactoe-forget-me")
    text = await refusal(await arena.raw_click(member, own, f"ttt:forget:server:{member.id}"))
    assert "Only members with Manage Server" in text, text
    assert "1W 0L 0D" in await stats(arena, bob, channel, alice)

    # A live game is in the way, named with its link once the bot has recorded its
    # message (the board is posted first; until then the refusal names the channel).
    live = await arena.start_bot_game(alice, channel)
    link = f"https://discord.com/channels/{arena.guild.id}/{channel.id}/{live.id}"
    named = {
        f"This server has 1 game in progress: {where}." for where in (link, f"<#{channel.id}>")
    }
    for _ in range(40):  # each refusal changes nothing, so asking again is harmless
        text = await refusal(await arena.command(moderator, channel, "tictactoe-forget-server"))
        assert any(n in text for n in named), text
        if link in text:
            break
        await asyncio.sleep(0.05)
    assert link in text, text
    await arena.command(alice, channel, "tictactoe-stop")

    question = await ask(arena, moderator, channel, "tictactoe-forget-server")
    assert "Erase everything I hold about this server?" in question.text
    answer = await arena.click(moderator, question, label="Erase this server's data")
    assert answer.type is CallbackType.UPDATE_MESSAGE
    assert arena.current(question).text.startswith("🗑️ Done"), arena.current(question).text
    assert "No rated games yet" in await leaderboard(arena, bob, channel)
    assert "1500" in await stats(arena, bob, channel, alice)
    text = await refusal(await arena.click(bob, board, label="Rematch"))
    assert "doesn't exist any more" in text, text
