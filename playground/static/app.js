// The playground's Discord client: channels, messages, the member switcher, the slash-command
// box and the member context menu, all drawn from /api (see docs/playground.md). Messages are
// drawn from the bot's own payloads; a component this page does not know is shown as such.

"use strict";

const { markdown, refreshTimestamps, el } = window.Markdown;

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
    } catch (error) {
      showError(String(error.message || error));
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
  node.title = `${count} unread mention${count === 1 ? "" : "s"}`;
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
  $("server-name").textContent = state.server.name;
  localeOptions($("server-locale"), state.server.locale);
  const me = member(ui.me);
  $("me-name").textContent = me.name;
  $("me-avatar").replaceWith(Object.assign(avatar(me.name, me.id), { id: "me-avatar" }));
  localeOptions($("me-locale"), me.locale);
  document.documentElement.lang = me.locale;
  const channel = state.channels.find((c) => c.id === ui.channel);
  $("channel-name").textContent = channel.name;
  $("command-input").placeholder = `Message #${channel.name}: type / for the bot's commands`;
  $("channels").replaceChildren(
    ...state.channels.map((c) => {
      const item = el("li", c.id === ui.channel ? "channel active" : "channel");
      item.dataset.id = c.id;
      item.append(el("span", "hash", "#"), el("span", "name", c.name), badge(c.unread_mentions));
      item.addEventListener("click", () => switchTo(ui.me, c.id));
      return item;
    }),
  );
  $("member-list").replaceChildren(
    ...state.members.map((m) => {
      const item = el("li", m.id === ui.me ? "member active" : "member");
      item.dataset.id = m.id;
      item.dataset.name = m.name;
      const text = el("div", "member-text");
      const name = el("div", "member-name", m.name);
      if (m.owner) name.append(el("span", "owner", " 👑"));
      const facts = [m.locale, ...m.roles].join(" · ");
      text.append(name, el("div", "member-facts", facts));
      item.append(avatar(m.name, m.id), text, badge(m.unread_mentions));
      item.title = m.permissions.length ? `Permissions: ${m.permissions.join(", ")}` : "";
      item.addEventListener("click", () => switchTo(m.id, ui.channel));
      item.addEventListener("contextmenu", (event) => openMemberMenu(event, m));
      return item;
    }),
  );
  if (ui.picked && !findCommand(ui.picked.name)) closeCommand();
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

// -- messages ---------------------------------------------------------------------------

function drawMessages(messages) {
  const box = $("messages");
  const atBottom = box.scrollHeight - box.scrollTop - box.clientHeight < 80;
  const ctx = context();
  const shown = [];
  for (const view of messages) {
    const id = view.payload.id;
    if (ui.dismissed.has(id)) continue;
    const key = JSON.stringify(view) + ctx.locale + (ui.notes.get(id) || "");
    let entry = ui.nodes.get(id);
    if (!entry || entry.key !== key) {
      entry = { key, node: drawMessage(view, ctx) };
      ui.nodes.set(id, entry);
    }
    shown.push(entry.node);
  }
  const ids = new Set(messages.map((m) => m.payload.id));
  for (const id of ui.nodes.keys()) if (!ids.has(id)) ui.nodes.delete(id);
  if (shown.length === 0) {
    shown.push(el("div", "empty", "No messages yet. Type / below to start a game."));
  }
  box.replaceChildren(...shown);
  const target = ui.jumpTo && ui.nodes.get(ui.jumpTo);
  ui.jumpTo = null;
  if (target) {
    target.node.scrollIntoView({ block: "center" });
    target.node.classList.add("flash");
    setTimeout(() => target.node.classList.remove("flash"), 1500);
  } else if (atBottom) {
    box.scrollTop = box.scrollHeight;
  }
}

function drawMessage(view, ctx) {
  const message = view.payload;
  const node = el("article", "message");
  node.dataset.id = message.id;
  if (view.highlighted) node.classList.add("highlighted");
  if (view.ephemeral) node.classList.add("ephemeral");
  const meta = message.interaction_metadata;
  if (meta && meta.name) {
    const line = el("div", "used-command");
    const who = ctx.names.users[meta.user.id] || meta.user.global_name || meta.user.username;
    line.append(el("span", "who", who), " used ", el("span", "command-name", "/" + meta.name));
    node.append(line);
  }
  const header = el("div", "message-header");
  header.append(el("span", "author", view.author_name));
  if (message.author.bot) header.append(el("span", "app-tag", "APP"));
  const sent = new Date(message.timestamp);
  const time = el("time", "sent", sent.toLocaleTimeString(ctx.locale, { timeStyle: "short" }));
  time.title = sent.toLocaleString(ctx.locale, { dateStyle: "full", timeStyle: "medium" });
  header.append(time);
  if (message.edited_timestamp) header.append(el("span", "edited", "(edited)"));
  node.append(avatar(view.author_name, message.author.id), header);
  const body = el("div", "message-body");
  if (view.loading) body.append(el("div", "thinking", `${view.author_name} is thinking…`));
  if (message.content) body.append(markdown(message.content, ctx));
  for (const embed of message.embeds || []) body.append(drawEmbed(embed, ctx));
  if (message.components && message.components.length) {
    body.append(drawComponents(message.components, ctx, message.id));
  }
  for (const file of message.attachments || []) {
    body.append(el("div", "attachment", `📎 ${file.filename} (${file.size} bytes)`));
  }
  node.append(body);
  if (view.ephemeral) {
    const note = el("div", "ephemeral-note");
    const dismiss = el("a", "dismiss", "Dismiss message");
    dismiss.href = "#";
    dismiss.addEventListener("click", (event) => {
      event.preventDefault();
      ui.dismissed.add(message.id);
      node.remove();
    });
    note.append("👁 Only you can see this • ", dismiss);
    node.append(note);
  }
  const said = ui.notes.get(message.id);
  if (said) node.append(el("div", "interaction-failed", said));
  return node;
}

function drawEmbed(embed, ctx) {
  const node = el("div", "embed");
  if (embed.color) node.style.borderLeftColor = colour(embed.color);
  if (embed.title) node.append(el("div", "embed-title", embed.title));
  if (embed.description) node.append(markdown(embed.description, ctx));
  for (const field of embed.fields || []) {
    const part = el("div", "embed-field");
    part.append(el("div", "embed-field-name", field.name), markdown(field.value, ctx));
    node.append(part);
  }
  if (embed.footer && embed.footer.text) node.append(el("div", "subtext", embed.footer.text));
  return node;
}

function colour(value) {
  return "#" + Number(value).toString(16).padStart(6, "0");
}

const SELECTS = new Set([3, 5, 6, 7, 8]);

function drawComponents(components, ctx, messageId) {
  const holder = el("div", "components");
  for (const component of components) holder.append(drawComponent(component, ctx, messageId));
  return holder;
}

function drawComponent(c, ctx, messageId) {
  switch (c.type) {
    case 1: {
      const row = el("div", "action-row");
      for (const child of c.components || []) row.append(drawComponent(child, ctx, messageId));
      return row;
    }
    case 2:
      return drawButton(c, messageId);
    case 9: {
      const section = el("div", "section");
      section.append(drawComponents(c.components || [], ctx, messageId));
      if (c.accessory) {
        const side = el("div", "accessory");
        side.append(drawComponent(c.accessory, ctx, messageId));
        section.append(side);
      }
      return section;
    }
    case 10: {
      const text = markdown(c.content || "", ctx);
      text.classList.add("text-display");
      return text;
    }
    case 11:
      return el("div", "media", `🖼 ${c.description || "thumbnail"}`);
    case 12: {
      const gallery = el("div", "gallery");
      for (const item of c.items || []) {
        gallery.append(el("div", "media", `🖼 ${item.description || "image"}`));
      }
      return gallery;
    }
    case 13:
      return el("div", "attachment", `📎 ${(c.file && c.file.url) || "file"}`);
    case 14: {
      const line = el("div", c.divider === false ? "separator blank" : "separator");
      if (c.spacing === 2) line.classList.add("large");
      return line;
    }
    case 17: {
      const box = el("div", "container");
      if (c.accent_color != null) box.style.borderLeftColor = colour(c.accent_color);
      if (c.spoiler) box.classList.add("spoiler-container");
      box.append(drawComponents(c.components || [], ctx, messageId));
      return box;
    }
    default:
      if (SELECTS.has(c.type)) {
        const menu = el("div", "select", c.placeholder || "Make a selection");
        menu.title = "Select menus cannot be used in the playground";
        return menu;
      }
      return el("div", "unknown-component", `Unknown component (type ${c.type})`);
  }
}

const STYLES = { 1: "primary", 2: "secondary", 3: "success", 4: "danger", 5: "link", 6: "premium" };

function drawButton(c, messageId) {
  const button = el("button", `btn ${STYLES[c.style] || "unknown-style"}`);
  button.type = "button";
  button.disabled = Boolean(c.disabled);
  if (c.emoji) {
    const emoji = c.emoji.id ? `:${c.emoji.name}:` : c.emoji.name || "";
    button.append(el("span", "emoji", emoji));
  }
  const label = (c.label || "").replace(/\u200b/g, "");
  if (label) button.append(el("span", "label", label));
  if (!c.emoji && !label) button.classList.add("blank");
  if (c.custom_id) button.dataset.customId = c.custom_id;
  if (c.style === 5 && c.url) {
    button.append(el("span", "link-arrow", " ↗"));
    button.title = c.url;
    button.addEventListener("click", () => {
      if (/^https?:\/\//.test(c.url)) window.open(c.url, "_blank", "noopener");
    });
  } else if (c.custom_id) {
    button.addEventListener("click", () => click(button, messageId, c.custom_id));
  }
  return button;
}

async function click(button, messageId, customId) {
  button.classList.add("pending");
  button.disabled = true;
  ui.notes.delete(messageId);
  try {
    const outcome = await api("/api/click", { as: ui.me, message: messageId, custom_id: customId });
    if (outcome.failed) ui.notes.set(messageId, outcome.failure || "This interaction failed");
  } catch (error) {
    ui.notes.set(messageId, String(error.message || error));
  }
  refresh();
}

// -- the slash-command box -----------------------------------------------------------------

function shownName(node) {
  return node.name_localized || node.name;
}

function findCommand(name) {
  return ui.commands.chat_input.find((c) => c.name === name);
}

function openCommandMenu() {
  const input = $("command-input");
  const menu = $("command-menu");
  const typed = input.value.slice(1).trim().toLowerCase();
  if (!input.value.startsWith("/") || ui.picked) {
    menu.hidden = true;
    return;
  }
  const offered = ui.commands.chat_input.filter(
    (c) => shownName(c).toLowerCase().includes(typed) || c.name.includes(typed),
  );
  menu.replaceChildren(el("div", "menu-title", `Commands matching /${typed}`));
  if (offered.length === 0) menu.append(el("div", "menu-empty", "No commands match."));
  for (const command of offered) {
    const item = el("button", "command-choice");
    item.type = "button";
    item.dataset.name = command.name;
    item.append(
      el("span", "command-name", "/" + shownName(command)),
      el("span", "command-description", command.description_localized || command.description),
    );
    item.addEventListener("click", () => pickCommand(command));
    menu.append(item);
  }
  menu.hidden = false;
}

function pickCommand(command) {
  ui.picked = command;
  $("command-menu").hidden = true;
  $("command-input").value = "/" + shownName(command) + " ";
  hideError();
  const form = $("command-form");
  const title = el("div", "form-title");
  title.append(
    el("span", "command-name", "/" + shownName(command)),
    el("span", "command-description", command.description_localized || command.description),
  );
  const fields = el("div", "fields");
  const options = [...(command.options || [])].sort((a, b) => (b.required ? 1 : 0) - (a.required ? 1 : 0));
  for (const option of options) fields.append(optionField(option));
  const actions = el("div", "form-actions");
  const send = el("button", "btn primary", "Send");
  send.type = "submit";
  send.id = "command-send";
  const cancel = el("button", "btn secondary", "Cancel");
  cancel.type = "button";
  cancel.addEventListener("click", closeCommand);
  actions.append(send, cancel);
  form.replaceChildren(title, fields, actions);
  form.hidden = false;
  const first = form.querySelector("select, input");
  if (first) first.focus();
}

function optionField(option) {
  const field = el("label", "option");
  field.dataset.option = option.name;
  const name = el("span", "option-name", shownName(option) + (option.required ? " *" : ""));
  field.title = option.description_localized || option.description;
  let input;
  const blank = () => new Option(option.required ? "Choose…" : "—", "");
  if (option.choices) {
    input = el("select");
    input.append(blank());
    for (const choice of option.choices) input.append(new Option(shownName(choice), JSON.stringify(choice.value)));
  } else if (option.type === 5) {
    input = el("select");
    input.append(blank(), new Option("True", "true"), new Option("False", "false"));
  } else if (option.type === 6 || option.type === 9) {
    input = el("select");
    input.append(blank());
    const people = Object.entries(ui.state.names.users).filter(([id]) => ui.state.members.some((m) => m.id === id) || id === ui.state.bot.id);
    for (const [id, label] of people) input.append(new Option("@" + label, JSON.stringify(id)));
  } else if (option.type === 7) {
    input = el("select");
    input.append(blank());
    for (const c of ui.state.channels) input.append(new Option("#" + c.name, JSON.stringify(c.id)));
  } else if (option.type === 8) {
    input = el("select");
    input.append(blank());
    for (const [id, label] of Object.entries(ui.state.names.roles)) input.append(new Option("@" + label, JSON.stringify(id)));
  } else if (option.type === 4 || option.type === 10) {
    input = el("input");
    input.type = "number";
    if (option.type === 4) input.step = "1";
    if (option.min_value != null) input.min = option.min_value;
    if (option.max_value != null) input.max = option.max_value;
    input.placeholder = option.description_localized || option.description;
  } else if (option.type === 3) {
    input = el("input");
    if (option.max_length != null) input.maxLength = option.max_length;
    input.placeholder = option.description_localized || option.description;
  } else {
    input = el("span", "unknown-component", `Option type ${option.type} is not supported here`);
  }
  input.dataset.type = String(option.type);
  field.append(name, input, el("span", "option-description", option.description_localized || option.description));
  return field;
}

function optionValues() {
  const values = {};
  for (const field of $("command-form").querySelectorAll(".option")) {
    const input = field.querySelector("select, input");
    if (!input || input.value === "") continue;
    const type = Number(input.dataset.type);
    if (input.tagName === "SELECT") values[field.dataset.option] = JSON.parse(input.value);
    else if (type === 4) values[field.dataset.option] = Number.parseInt(input.value, 10);
    else if (type === 10) values[field.dataset.option] = Number(input.value);
    else values[field.dataset.option] = input.value;
  }
  return values;
}

async function sendCommand(event) {
  event.preventDefault();
  if (!ui.picked) {
    const input = $("command-input");
    const typed = input.value.slice(1).trim().split(/\s+/)[0] || "";
    const match = ui.commands.chat_input.find((c) => shownName(c) === typed || c.name === typed);
    if (match) pickCommand(match);
    else if (input.value.trim()) showError("The bot reads no messages here: type / and pick one of its commands.");
    return;
  }
  const body = { as: ui.me, channel: ui.channel, name: ui.picked.name, options: optionValues() };
  $("command-send").disabled = true;
  try {
    const outcome = await api("/api/commands", body);
    closeCommand();
    if (outcome.failed) showError(outcome.failure || "This interaction failed");
  } catch (error) {
    showError(String(error.message || error));
    $("command-send").disabled = false;
  }
  refresh();
}

function closeCommand() {
  ui.picked = null;
  $("command-form").hidden = true;
  $("command-form").replaceChildren();
  $("command-menu").hidden = true;
  $("command-input").value = "";
}

function showError(text) {
  const box = $("composer-error");
  box.textContent = text;
  box.hidden = false;
}

function hideError() {
  $("composer-error").hidden = true;
}

// -- the member context menu (right-click): Apps lists the bot's user commands --------------

function openMemberMenu(event, target) {
  event.preventDefault();
  const menu = $("context-menu");
  const items = [el("div", "menu-title", target.name)];
  const act = el("button", "menu-item", `Act as ${target.name}`);
  act.addEventListener("click", () => {
    closeMenus();
    switchTo(target.id, ui.channel);
  });
  items.push(act, el("div", "menu-title", "Apps"));
  if (ui.commands.user.length === 0) {
    const none = el("button", "menu-item", `${ui.state.bot.name} has no commands for members`);
    none.disabled = true;
    items.push(none);
  }
  for (const command of ui.commands.user) {
    const item = el("button", "menu-item app", shownName(command));
    item.dataset.name = command.name;
    item.addEventListener("click", async () => {
      closeMenus();
      try {
        const outcome = await api("/api/user-commands", {
          as: ui.me,
          channel: ui.channel,
          name: command.name,
          target: target.id,
        });
        if (outcome.failed) showError(outcome.failure || "This interaction failed");
      } catch (error) {
        showError(String(error.message || error));
      }
      refresh();
    });
    items.push(item);
  }
  for (const item of items) if (item.tagName === "BUTTON") item.type = "button";
  menu.replaceChildren(...items);
  menu.style.left = `${Math.min(event.clientX, window.innerWidth - 240)}px`;
  menu.style.top = `${Math.min(event.clientY, window.innerHeight - 200)}px`;
  menu.hidden = false;
}

function closeMenus() {
  $("context-menu").hidden = true;
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
  input.addEventListener("keydown", (event) => {
    if (event.key === "Escape") closeCommand();
  });
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
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape") closeMenus();
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
