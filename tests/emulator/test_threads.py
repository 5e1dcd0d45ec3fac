"""Threads as Discord has them: a thread lives in a text channel (``parent_id``), the bot
hears of the threads it sees (THREAD_CREATE), posting in one takes Send Messages in
Threads, and a private thread is seen by its members and by Manage Threads only."""

from __future__ import annotations

import asyncio

import discord
import pytest

from discord_emulator import DEFAULT_BOT_PERMISSIONS, Permission, UserActionError

from .helpers import TIMEOUT, Arena


async def test_a_public_thread_reaches_the_bot_with_its_parent(arena: Arena) -> None:
    emu, bot = arena.emu, arena.bot
    thread = emu.add_thread(arena.channel, "after-game chat", owner=arena.alice)
    await emu.wait_for(lambda: bot.get_channel(thread.id) is not None)
    seen = bot.get_channel(thread.id)
    assert isinstance(seen, discord.Thread) and seen.parent_id == arena.channel.id
    assert seen.type is discord.ChannelType.public_thread and seen.owner_id == arena.alice.id
    (created,) = [e for e in emu.dispatched("THREAD_CREATE") if e["id"] == str(thread.id)]
    assert created["newly_created"] and created["parent_id"] == str(arena.channel.id)
    sent = await asyncio.wait_for(seen.send("hello, thread"), TIMEOUT)
    assert emu.message(sent.id).channel is thread  # type: ignore[union-attr]
    assert emu.can_view(arena.bob, thread)


async def test_posting_in_a_thread_takes_send_messages_in_threads(arena: Arena) -> None:
    emu, bot = arena.emu, arena.bot
    quiet = emu.add_guild(
        "Quiet",
        bot_permissions=DEFAULT_BOT_PERMISSIONS & ~Permission.SEND_MESSAGES_IN_THREADS,
        everyone_permissions=int(Permission.VIEW_CHANNEL | Permission.CREATE_PUBLIC_THREADS),
    )
    owner = emu.add_user("owner")
    emu.add_member(quiet, owner)
    hall = emu.add_text_channel(quiet, "hall")
    thread = emu.add_thread(hall, "plans", owner=owner)
    await emu.wait_for(lambda: bot.get_channel(thread.id) is not None)
    seen = bot.get_channel(thread.id)
    assert isinstance(seen, discord.Thread)
    with pytest.raises(discord.Forbidden) as refused:
        await asyncio.wait_for(seen.send("hi"), TIMEOUT)
    assert refused.value.code == 50013
    channel = bot.get_channel(hall.id)
    assert isinstance(channel, discord.TextChannel)
    await asyncio.wait_for(channel.send("the channel itself is fine"), TIMEOUT)
    with pytest.raises(UserActionError):  # nor may a member post without the permission
        await emu.send_message(owner, thread, "hi")


async def test_a_private_thread_is_seen_by_its_members_only(arena: Arena) -> None:
    emu, bot = arena.emu, arena.bot
    secret = emu.add_thread(
        arena.channel, "duel", owner=arena.alice, private=True, members=[arena.bob]
    )
    assert emu.can_view(arena.alice, secret) and emu.can_view(arena.bob, secret)
    assert not emu.can_view(arena.helper, secret)
    with pytest.raises(UserActionError):
        await emu.run_command(arena.helper, secret, "play", opponent=arena.bob, mark="x")
    # The bot is no member and lacks Manage Threads: no THREAD_CREATE, and no access.
    await asyncio.sleep(0.1)
    assert not [e for e in emu.dispatched("THREAD_CREATE") if e["id"] == str(secret.id)]
    with pytest.raises(discord.Forbidden) as refused:
        await bot.http.send_message(secret.id, params=discord.http.handle_message_parameters("x"))
    assert refused.value.code == 50001
    # Added at creation, the bot hears of it and may post.
    shared = emu.add_thread(
        arena.channel, "with the bot", owner=arena.alice, private=True, members=[emu.bot]
    )
    await emu.wait_for(lambda: bot.get_channel(shared.id) is not None)
    seen = bot.get_channel(shared.id)
    assert isinstance(seen, discord.Thread) and seen.type is discord.ChannelType.private_thread
    await asyncio.wait_for(seen.send("hello"), TIMEOUT)


async def test_threads_come_only_from_text_channels_and_with_the_permission(
    arena: Arena,
) -> None:
    emu = arena.emu
    thread = emu.add_thread(arena.channel, "a", owner=arena.alice)
    with pytest.raises(UserActionError):
        emu.add_thread(thread, "nested", owner=arena.alice)
    bare = emu.add_guild(
        "Bare", everyone_permissions=int(Permission.VIEW_CHANNEL | Permission.SEND_MESSAGES)
    )
    someone = emu.add_user("someone")
    emu.add_member(bare, someone)
    room = emu.add_text_channel(bare, "room")
    with pytest.raises(UserActionError):
        emu.add_thread(room, "b", owner=someone)


async def test_a_deleted_channel_takes_its_threads(arena: Arena) -> None:
    emu, bot = arena.emu, arena.bot
    hall = emu.add_text_channel(arena.guild, "hall")
    thread = emu.add_thread(hall, "side talk", owner=arena.alice)
    await emu.wait_for(lambda: bot.get_channel(thread.id) is not None)
    emu.delete_channel(hall)
    await emu.wait_for(lambda: bot.get_channel(thread.id) is None)
    (gone,) = [e for e in emu.dispatched("THREAD_DELETE") if e["id"] == str(thread.id)]
    assert gone["parent_id"] == str(hall.id) and emu.channel(thread.id) is None


async def test_the_bot_starts_a_public_thread_without_a_message(arena: Arena) -> None:
    """POST /channels/{id}/threads: a thread of the text channel, named as asked, the bot
    its creator and first member; THREAD_CREATE says it is new; the bot may post there."""
    emu, bot = arena.emu, arena.bot
    channel = arena.bot_channel()
    thread = await asyncio.wait_for(
        channel.create_thread(name="a game", type=discord.ChannelType.public_thread), TIMEOUT
    )
    made = emu.channel(thread.id)
    assert made is not None and made.parent is arena.channel and made.name == "a game"
    assert thread.parent_id == channel.id and thread.type is discord.ChannelType.public_thread
    assert made.owner_id == emu.bot.id and made.thread_members == {emu.bot.id}
    (created,) = [e for e in emu.dispatched("THREAD_CREATE") if e["id"] == str(thread.id)]
    assert created["newly_created"] and created["member"]["user_id"] == str(emu.bot.id)
    await emu.wait_for(lambda: bot.get_channel(thread.id) is not None)
    sent = await asyncio.wait_for(thread.send("hello"), TIMEOUT)
    assert emu.message(sent.id).channel is made  # type: ignore[union-attr]
    assert emu.can_view(arena.bob, made)
    # Without a type, API v10 makes a private thread: Create Private Threads.
    private = await asyncio.wait_for(channel.create_thread(name="quiet"), TIMEOUT)
    assert private.type is discord.ChannelType.private_thread
    assert not emu.can_view(arena.bob, emu.channel(private.id))  # type: ignore[arg-type]


async def test_starting_a_thread_takes_create_public_threads(arena: Arena) -> None:
    emu, bot = arena.emu, arena.bot
    bare = emu.add_guild(
        "No threads",
        bot_permissions=int(
            Permission.VIEW_CHANNEL | Permission.SEND_MESSAGES | Permission.SEND_MESSAGES_IN_THREADS
        ),
        everyone_permissions=int(Permission.VIEW_CHANNEL),
    )
    hall = emu.add_text_channel(bare, "hall")
    await emu.wait_for(lambda: bot.get_channel(hall.id) is not None)
    seen = bot.get_channel(hall.id)
    assert isinstance(seen, discord.TextChannel)
    with pytest.raises(discord.Forbidden) as refused:
        await asyncio.wait_for(
            seen.create_thread(name="x", type=discord.ChannelType.public_thread), TIMEOUT
        )
    assert refused.value.code == 50013
    assert [c for c in bare.channels if c.is_thread] == []
    blind = emu.add_guild(
        "Blind", bot_permissions=int(Permission.CREATE_PUBLIC_THREADS), everyone_permissions=0
    )
    dark = emu.add_text_channel(blind, "dark")
    with pytest.raises(discord.Forbidden) as unseen:
        await bot.http.start_thread_without_message(
            dark.id, name="x", auto_archive_duration=1440, type=11
        )
    assert unseen.value.code == 50001


async def test_a_thread_s_name_and_options_are_checked(arena: Arena) -> None:
    emu, bot = arena.emu, arena.bot
    channel = arena.channel
    before = len(arena.guild.channels)
    for name in ("", "x" * 101):
        with pytest.raises(discord.HTTPException) as bad:
            await bot.http.start_thread_without_message(
                channel.id, name=name, auto_archive_duration=1440, type=11
            )
        assert bad.value.status == 400 and bad.value.code == 50035
    with pytest.raises(discord.HTTPException) as archive:
        await bot.http.start_thread_without_message(
            channel.id,
            name="ok",
            auto_archive_duration=30,
            type=11,  # type: ignore[arg-type]
        )
    assert archive.value.code == 50035
    with pytest.raises(discord.HTTPException) as kind:
        await bot.http.start_thread_without_message(
            channel.id,
            name="ok",
            auto_archive_duration=60,
            type=0,  # type: ignore[arg-type]
        )
    assert kind.value.code == 50035
    assert len(arena.guild.channels) == before
    longest = await bot.http.start_thread_without_message(
        channel.id, name="y" * 100, auto_archive_duration=60, type=11
    )
    thread = emu.channel(longest["id"])
    assert thread is not None and thread.name == "y" * 100
    with pytest.raises(discord.HTTPException) as nested:  # no thread of a thread
        await bot.http.start_thread_without_message(
            thread.id, name="z", auto_archive_duration=60, type=11
        )
    assert nested.value.code == 50024


async def test_a_saved_world_keeps_its_threads(arena: Arena) -> None:
    from discord_emulator import Emulator, persist

    emu = arena.emu
    thread = emu.add_thread(arena.channel, "kept", owner=arena.alice, members=[arena.bob])
    again = Emulator()
    persist.restore(again, persist.snapshot(emu))
    copy = again.channel(thread.id)
    assert copy is not None and copy.is_thread and copy.type is thread.type
    assert copy.parent is again.channel(arena.channel.id) and copy.owner_id == arena.alice.id
    assert copy.thread_members == thread.thread_members
