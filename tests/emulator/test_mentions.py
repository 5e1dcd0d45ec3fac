"""Who a message pings, by Discord's allowed-mentions rules, and what the bot receives."""

from __future__ import annotations

import asyncio

import discord

from discord_emulator import DEFAULT_BOT_PERMISSIONS, Permission, Pings

from .helpers import TIMEOUT, Arena


async def test_interaction_response_pings_only_allowed_users(arena: Arena) -> None:
    handle = await arena.emu.run_command(
        arena.alice, arena.channel, "play", opponent=arena.bob, mark="x"
    )
    message = (await handle.response()).message
    assert message is not None
    assert arena.alice.mention in message.content and arena.bob.mention in message.content
    assert message.pings == Pings(users=frozenset({arena.bob.id}))


async def test_channel_messages_follow_allowed_mentions(arena: Arena) -> None:
    emu, channel = arena.emu, arena.bot_channel()
    quiet_role = emu.add_role(arena.guild, "quiet")  # not mentionable
    text = f"{arena.alice.mention} {arena.players.mention} {quiet_role.mention} @everyone"

    default = await asyncio.wait_for(channel.send(text), TIMEOUT)
    pings = emu.message(default.id).pings  # type: ignore[union-attr]
    # No Mention Everyone permission: no @everyone and no unmentionable role.
    assert pings == Pings(users=frozenset({arena.alice.id}), roles=frozenset({arena.players.id}))

    none = await asyncio.wait_for(
        channel.send(text, allowed_mentions=discord.AllowedMentions.none()), TIMEOUT
    )
    assert emu.message(none.id).pings.nobody  # type: ignore[union-attr]

    only_bob = discord.AllowedMentions(
        users=[discord.Object(arena.bob.id)], roles=False, everyone=False
    )
    sent = await asyncio.wait_for(
        channel.send(f"{arena.alice.mention} {arena.bob.mention}", allowed_mentions=only_bob),
        TIMEOUT,
    )
    assert emu.message(sent.id).pings == Pings(users=frozenset({arena.bob.id}))  # type: ignore[union-attr]


async def test_replies_ping_the_author_unless_told_not_to(arena: Arena) -> None:
    emu = arena.emu
    original = await emu.send_message(arena.alice, arena.channel, "good game?")
    partial = arena.bot_channel().get_partial_message(original.id)
    loud = await asyncio.wait_for(partial.reply("gg"), TIMEOUT)
    assert emu.message(loud.id).pings.users == {arena.alice.id}  # type: ignore[union-attr]
    assert emu.message(loud.id).type == 19  # type: ignore[union-attr]
    quiet = await asyncio.wait_for(partial.reply("gg", mention_author=False), TIMEOUT)
    assert emu.message(quiet.id).pings.nobody  # type: ignore[union-attr]


async def test_everyone_needs_the_permission(arena: Arena) -> None:
    emu, bot = arena.emu, arena.bot
    lounge = emu.add_guild(
        "Lounge", bot_permissions=DEFAULT_BOT_PERMISSIONS | Permission.MENTION_EVERYONE
    )
    hall = emu.add_text_channel(lounge, "hall")
    await emu.wait_for(lambda: bot.get_channel(hall.id) is not None)
    channel = bot.get_channel(hall.id)
    assert isinstance(channel, discord.TextChannel)
    sent = await asyncio.wait_for(channel.send("@everyone game night"), TIMEOUT)
    assert emu.message(sent.id).pings.everyone  # type: ignore[union-attr]


async def test_user_messages_and_message_content_intent(arena: Arena) -> None:
    emu, bot = arena.emu, arena.bot
    received: list[discord.Message] = []

    async def on_message(message: discord.Message) -> None:
        received.append(message)

    bot.add_listener(on_message)
    plain = await emu.send_message(arena.alice, arena.channel, f"hey {arena.bob.mention}")
    assert plain.pings.users == {arena.bob.id}
    mention = await emu.send_message(arena.alice, arena.channel, f"{emu.bot.mention} hello")
    await emu.wait_for(lambda: len(received) >= 2)
    # Without the message content intent only messages mentioning the bot keep their content.
    assert [m.content for m in received] == ["", f"{emu.bot.mention} hello"]
    assert received[1].id == mention.id


async def test_direct_messages_both_ways(arena: Arena) -> None:
    emu, bot = arena.emu, arena.bot
    received: list[discord.Message] = []

    async def on_message(message: discord.Message) -> None:
        received.append(message)

    bot.add_listener(on_message)
    alice = await asyncio.wait_for(bot.fetch_user(arena.alice.id), TIMEOUT)
    sent = await asyncio.wait_for(alice.send("your move"), TIMEOUT)
    dm = emu.dm_channel(arena.alice)
    assert [m.content for m in emu.messages(dm)] == ["your move"]
    assert sent.channel.id == dm.id
    await emu.send_message(arena.alice, dm, "b2")
    await emu.wait_for(lambda: any(m.content == "b2" for m in received))
    reply = next(m for m in received if m.content == "b2")
    assert isinstance(reply.channel, discord.DMChannel) and reply.author.id == arena.alice.id


async def test_attachments_are_uploaded_as_multipart(arena: Arena) -> None:
    import io

    file = discord.File(io.BytesIO(b"X.O\n.X.\nO.X"), filename="board.txt")
    sent = await asyncio.wait_for(arena.bot_channel().send("final board", file=file), TIMEOUT)
    stored = arena.emu.message(sent.id)
    assert stored is not None and stored.content == "final board"
    assert [(a["filename"], a["size"]) for a in stored.attachments] == [("board.txt", 11)]
    assert sent.attachments[0].filename == "board.txt"


def v2_mentions(*texts: str) -> discord.ui.LayoutView:
    """Text Displays at the top level, inside a Container and inside a Section."""
    top, contained, sectioned = texts
    view = discord.ui.LayoutView()
    view.add_item(discord.ui.TextDisplay(top))
    view.add_item(discord.ui.Container(discord.ui.TextDisplay(contained)))
    accessory = discord.ui.Button(label="Go", custom_id="go")
    view.add_item(
        discord.ui.Container(
            discord.ui.Section(discord.ui.TextDisplay(sectioned), accessory=accessory)
        )
    )
    return view


async def test_text_displays_mention_wherever_they_sit(arena: Arena) -> None:
    emu, channel = arena.emu, arena.bot_channel()
    texts = (arena.alice.mention, arena.bob.mention, arena.players.mention)
    loud = await asyncio.wait_for(channel.send(view=v2_mentions(*texts)), TIMEOUT)
    stored = emu.message(loud.id)
    assert stored is not None and stored.components_v2 and stored.content == ""
    expected = Pings(
        users=frozenset({arena.alice.id, arena.bob.id}), roles=frozenset({arena.players.id})
    )
    assert stored.pings == expected and stored.mentions == expected
    assert {int(u["id"]) for u in stored.to_payload(emu.users)["mentions"]} == {
        arena.alice.id,
        arena.bob.id,
    }

    only_bob = discord.AllowedMentions(
        users=[discord.Object(arena.bob.id)], roles=False, everyone=False
    )
    picked = await asyncio.wait_for(
        channel.send(view=v2_mentions(*texts), allowed_mentions=only_bob), TIMEOUT
    )
    assert emu.message(picked.id).pings == Pings(users=frozenset({arena.bob.id}))  # type: ignore[union-attr]
    quiet = await asyncio.wait_for(
        channel.send(view=v2_mentions(*texts), allowed_mentions=discord.AllowedMentions.none()),
        TIMEOUT,
    )
    assert emu.message(quiet.id).pings.nobody  # type: ignore[union-attr]
    assert emu.message(quiet.id).mentions.nobody  # type: ignore[union-attr]


async def test_edits_highlight_but_never_notify(arena: Arena) -> None:
    emu, channel = arena.emu, arena.bot_channel()
    sent = await asyncio.wait_for(channel.send(view=v2_mentions("a", "b", "c")), TIMEOUT)
    assert emu.message(sent.id).pings.nobody  # type: ignore[union-attr]
    everyone_allowed = discord.AllowedMentions.all()
    await asyncio.wait_for(
        sent.edit(
            view=v2_mentions(arena.alice.mention, "b", "c"), allowed_mentions=everyone_allowed
        ),
        TIMEOUT,
    )
    stored = emu.message(sent.id)
    assert stored is not None and stored.edits == 1
    assert stored.mentions.users == {arena.alice.id}, "the edit highlights Alice"
    assert stored.pings.nobody, "but notifies nobody"
    plain = await asyncio.wait_for(channel.send(f"hi {arena.bob.mention}"), TIMEOUT)
    await asyncio.wait_for(plain.edit(content=f"hi {arena.alice.mention}"), TIMEOUT)
    edited = emu.message(plain.id)
    assert edited is not None
    assert edited.pings.users == {arena.bob.id} and edited.mentions.users == {arena.alice.id}


async def test_a_deferred_answer_notifies_when_first_filled(arena: Arena) -> None:
    emu, bot = arena.emu, arena.bot
    allowed = discord.AllowedMentions(
        users=[discord.Object(arena.bob.id)], roles=False, everyone=False
    )
    filled: list[discord.InteractionMessage] = []

    @bot.tree.command(description="Think, then mention")
    async def think(interaction: discord.Interaction) -> None:
        await interaction.response.defer(thinking=True)
        view = v2_mentions(arena.bob.mention, arena.alice.mention, "-")
        filled.append(await interaction.edit_original_response(view=view, allowed_mentions=allowed))
        again = v2_mentions(arena.alice.mention, arena.bob.mention, "-")
        await interaction.edit_original_response(
            view=again, allowed_mentions=discord.AllowedMentions.all()
        )

    await asyncio.wait_for(bot.tree.sync(), TIMEOUT)
    await emu.wait_for_commands("think")
    handle = await emu.run_command(arena.alice, arena.channel, "think")
    message = await handle.edited_original(edits=2)
    assert filled and message.id == filled[0].id
    assert message.pings == Pings(users=frozenset({arena.bob.id})), "notified once, when filled"
    assert message.mentions.users == {arena.alice.id, arena.bob.id}, "the last edit highlights both"
