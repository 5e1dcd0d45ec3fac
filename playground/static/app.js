// The playground's Discord client: the refresh cycle, channels, the member switcher and the
// languages, all from /api (see docs/playground.md). Messages are drawn by draw.js (with
// markdown.js), the command box and the member menu are composer.js, the page's own words
// texts.js. Below 900 px the channels and the members are drawers over the chat.

"use strict";

const ui = {
  state: null, // GET /api/state
  commands: { chat_input: [], user: [] }, // GET /api/commands
  me: null, // the acting member's id
  channel: null, // the shown channel's id
  nodes: new Map(), // message id -> { key, node }
  dismissed: new Set(), // ephemeral messages dismissed on this page
  marked: new Map(), // "member:channel" -> the last message id reported read
  picked: null, // the command whose options are being filled
  notes: new Map(), // message id -> a line under it ("This interaction failed")
  jumpTo: null, // a message to scroll to once its channel is drawn
  busy: false,
  again: false,
  loadFailed: false,
};

const $ = (id) => document.getElementById(id);

async function api(path, body) {
  const init = body === undefined ? {} : {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  };
  const response = await fetch(path, init);
  const data = await response.json();
  if (!response.ok) throw new Error(data.error || response.statusText);
  return data;
}

function member(id) {
  return ui.state.members.find((m) => m.id === id);
}

function myLocale() {
  const found = ui.state && member(ui.me);
  return found ? found.locale : "en-US";
}

function context() {
  const mine = member(ui.me);
  return {
    names: ui.state.names,
    me: ui.me,
    locale: myLocale(),
    roles: mine ? mine.roles : [],
    guild: ui.state.server.id,
    jump: (channel, message) => {
      ui.jumpTo = message;
      switchTo(ui.me, channel);
    },
  };
}

// -- the refresh cycle: every "changed" event fetches what this member sees ------------------

async function refresh() {
  if (!ui.me) return; // start() has not picked a member yet
  if (ui.busy) {
    ui.again = true;
    return;
  }
  ui.busy = true;
  do {
    ui.again = false;
    try {
      await load();
      if (ui.loadFailed) hideError();
      ui.loadFailed = false;
    } catch (error) {
      ui.loadFailed = true; // e.g. the playground is restarting: the next event clears it
      showError(tr("unreachable", { error: error.message || error }));
    }
  } while (ui.again);
  ui.busy = false;
}

async function load() {
  const state = await api(`/api/state?as=${ui.me}`);
  ui.state = state;
  if (!ui.channel || !state.channels.some((c) => c.id === ui.channel)) {
    ui.channel = (state.channels.find((c) => c.name === "games") || state.channels[0]).id;
  }
  const [commands, channel] = await Promise.all([
    api(`/api/commands?as=${ui.me}&channel=${ui.channel}`),
    api(`/api/channels/${ui.channel}/messages?as=${ui.me}`),
  ]);
  ui.commands = commands;
  drawChrome();
  drawMessages(channel.messages);
  const latest = channel.messages.length ? channel.messages[channel.messages.length - 1] : null;
  const key = `${ui.me}:${ui.channel}`;
  if (latest && ui.marked.get(key) !== latest.payload.id && !document.hidden) {
    ui.marked.set(key, latest.payload.id);
    api("/api/read", { as: ui.me, channel: ui.channel }).catch(() => {});
  }
  history.replaceState(null, "", `#as=${ui.me}&channel=${ui.channel}`);
}

// -- the frame: server, channels, members, languages ----------------------------------------

function localeOptions(select, chosen) {
  if (select.options.length !== ui.state.locales.length) {
    select.replaceChildren(...ui.state.locales.map((code) => new Option(code, code)));
  }
  select.value = chosen;
}

function badge(count) {
  const node = el("span", "badge", String(count));
  node.title = tr("unread", { count });
  node.hidden = count === 0;
  return node;
}

function avatar(name, id) {
  const node = el("div", "avatar", name.slice(0, 1).toUpperCase());
  let hue = 0;
  for (const char of name + id) hue = (hue * 131 + char.charCodeAt(0)) % 360;
  node.style.setProperty("--hue", String(hue));
  return node;
}

function drawChrome() {
  const { state } = ui;
  Texts.translatePage();
  $("server-name").textContent = state.server.name;
  localeOptions($("server-locale"), state.server.locale);
  const me = member(ui.me);
  $("me-name").textContent = me.name;
  $("me-avatar").replaceWith(Object.assign(avatar(me.name, me.id), { id: "me-avatar" }));
  const acting = Object.assign(avatar(me.name, me.id), { id: "acting-avatar" });
  acting.classList.add("small");
  $("acting-avatar").replaceWith(acting);
  localeOptions($("me-locale"), me.locale);
  document.documentElement.lang = me.locale;
  const channel = state.channels.find((c) => c.id === ui.channel);
  $("channel-name").textContent = channel.name;
  $("channel-header").querySelector(".hash").textContent = symbol(channel);
  $("channel-header").title = reachHint(channel);
  const called = (channel.kind === "group_dm" ? "" : symbol(channel)) + channel.name;
  $("command-input").placeholder = tr("placeholder", { channel: called });
  $("command-input").setAttribute("aria-label", $("command-input").placeholder);
  $("channels").replaceChildren(...channelItems(state));
  $("member-list").replaceChildren(
    ...state.members.map((m) => {
      const item = el("li", m.id === ui.me ? "member active" : "member");
      item.dataset.id = m.id;
      item.dataset.name = m.name;
      const text = el("div", "member-text");
      const name = el("div", "member-name", m.name);
      if (m.owner) name.append(Object.assign(el("span", "owner", " 👑"), { title: tr("owner") }));
      const facts = [m.locale, ...m.roles].join(" · ");
      text.append(name, el("div", "member-facts", facts));
      item.append(avatar(m.name, m.id), text, badge(m.unread_mentions));
      item.title = m.permissions.length ? tr("permissions", { list: m.permissions.join(", ") }) : "";
      onPress(item, () => {
        closeDrawers();
        switchTo(m.id, ui.channel);
      }, (event) => openMemberMenu(event, m));
      return item;
    }),
  );
  const bot = { ...state.bot, bot: true };
  const item = el("li", "member bot");
  item.dataset.id = bot.id;
  item.dataset.name = bot.name;
  const text = el("div", "member-text");
  const name = el("div", "member-name", bot.name);
  name.append(" ", el("span", "app-tag", "APP"));
  text.append(name, el("div", "member-facts", bot.roles.join(" · ")));
  item.append(avatar(bot.name, bot.id), text);
  item.title = tr("cannotActAsBot");
  onPress(item, (event) => openMemberMenu(event, bot), (event) => openMemberMenu(event, bot));
  $("bot-list").replaceChildren(item);
  if (ui.picked && !findCommand(ui.picked.name)) closeCommand();
}

// The sidebar: the server's channels (under the "Text channels" heading of the page), then
// the server without the bot's, then the direct messages: the bot's DM and the group DMs.
function channelItems(state) {
  const items = [];
  let group = state.server.name;
  for (const c of state.channels) {
    const place = c.place || "";
    if (place !== group) {
      group = place;
      const title = place ? tr("withoutBot", { server: place }) : tr("directMessages");
      items.push(el("li", "section-title channel-heading", title));
    }
    const item = el("li", c.id === ui.channel ? "channel active" : "channel");
    item.dataset.id = c.id;
    item.dataset.kind = c.kind;
    item.title = reachHint(c);
    item.append(el("span", "hash", symbol(c)), el("span", "name", c.name), badge(c.unread_mentions));
    item.addEventListener("click", () => {
      closeDrawers();
      switchTo(ui.me, c.id);
    });
    items.push(item);
  }
  return items;
}

function symbol(channel) {
  return { dm: "@", group_dm: "👥" }[channel.kind] || "#";
}

// Where the bot is not a member, say whose commands reach there.
function reachHint(channel) {
  if (channel.bot) return "";
  return tr(channel.kind === "text" ? "withoutBotHelp" : "privateHelp");
}

// A click (a tap) does `tap`; a right-click, or a touch held for half a second, does `menu`,
// as Discord's mobile client opens a member's menu on a long press.
function onPress(node, tap, menu) {
  let timer = null;
  let held = false;
  const cancel = () => clearTimeout(timer);
  node.addEventListener("pointerdown", (event) => {
    held = false;
    if (event.pointerType === "mouse") return;
    timer = setTimeout(() => {
      held = true;
      menu(event);
    }, 500);
  });
  for (const kind of ["pointerup", "pointercancel", "pointerleave"]) node.addEventListener(kind, cancel);
  node.addEventListener("click", (event) => {
    event.stopPropagation(); // the page's click closes menus: this one may have opened one
    if (held) return; // the long press already opened the menu
    closeMenus();
    tap(event);
  });
  node.addEventListener("contextmenu", (event) => {
    event.preventDefault();
    cancel();
    if (!held) menu(event);
    held = true;
  });
}

// -- the drawers (narrow screens): channels on the left, members on the right -------------

function openDrawer(which) {
  const open = document.body.dataset.drawer === which ? "" : which;
  document.body.dataset.drawer = open;
  $("scrim").hidden = !open;
  $("show-channels").setAttribute("aria-expanded", String(open === "channels"));
  $("show-members").setAttribute("aria-expanded", String(open === "members"));
}

function closeDrawers() {
  if (document.body.dataset.drawer) openDrawer("");
}

function switchTo(me, channel) {
  const changed = me !== ui.me;
  ui.me = me;
  ui.channel = channel;
  if (changed) {
    closeCommand();
    ui.nodes.clear();
  }
  hideError();
  refresh();
}

// -- start -------------------------------------------------------------------------------

function start() {
  const wanted = new URLSearchParams(location.hash.slice(1));
  ui.me = wanted.get("as");
  ui.channel = wanted.get("channel");
  api("/api/state")
    .then((state) => {
      if (!state.members.some((m) => m.id === ui.me)) ui.me = state.members[0].id;
      refresh();
      listen();
    })
    .catch((error) => showError(String(error.message || error)));
  const input = $("command-input");
  input.addEventListener("input", openCommandMenu);
  $("composer").addEventListener("submit", sendCommand);
  $("me-locale").addEventListener("change", async (event) => {
    await api("/api/locale", { as: ui.me, locale: event.target.value });
    closeCommand();
    refresh();
  });
  $("server-locale").addEventListener("change", async (event) => {
    try {
      await api("/api/server-locale", { locale: event.target.value });
    } catch (error) {
      showError(String(error.message || error));
    }
    refresh();
  });
  document.addEventListener("click", (event) => {
    if (!$("context-menu").contains(event.target)) closeMenus();
  });
  $("show-channels").addEventListener("click", () => openDrawer("channels"));
  $("show-members").addEventListener("click", () => openDrawer("members"));
  $("scrim").addEventListener("click", closeDrawers);
  document.addEventListener("keydown", (event) => {
    if (event.key !== "Escape") return;
    closeMenus();
    closeDrawers();
    closeCommand();
  });
  document.addEventListener("visibilitychange", () => document.hidden || refresh());
  setInterval(() => refreshTimestamps($("messages")), 1000);
}

// Server-sent events: each "changed" fetches again what this member sees.
function listen() {
  const events = new EventSource("/api/events");
  events.addEventListener("changed", () => refresh());
  events.onopen = () => $("connection").classList.add("live");
  events.onerror = () => $("connection").classList.remove("live");
}

// For the browser test: draw a payload's components as a message would.
window.Client = { drawComponents };

document.addEventListener("DOMContentLoaded", start);
