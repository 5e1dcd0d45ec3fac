// Drawing a message from the bot's payload: its header, markdown content, embeds and
// components (Components V2 containers, sections, text displays, separators, action rows,
// buttons with their styles, emoji and disabled state). A component this page does not know
// is drawn as "Unknown component", never left out. Clicking a button calls /api/click.

"use strict";

const { markdown, refreshTimestamps, el } = window.Markdown;

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
    shown.push(el("div", "empty", tr("empty")));
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
    const shown = (meta.target_user ? "" : "/") + meta.name; // a user command has no slash
    const parts = { who: el("span", "who", who), command: el("span", "command-name", shown) };
    for (const piece of tr("used").split(/(\{\w+\})/)) {
      const slot = piece.match(/^\{(\w+)\}$/);
      if (slot && parts[slot[1]]) line.append(parts[slot[1]]);
      else if (piece) line.append(piece);
    }
    node.append(line);
  }
  const header = el("div", "message-header");
  header.append(el("span", "author", view.author_name));
  if (message.author.bot) header.append(el("span", "app-tag", "APP"));
  const sent = new Date(message.timestamp);
  const time = el("time", "sent", sent.toLocaleTimeString(ctx.locale, { timeStyle: "short" }));
  time.title = sent.toLocaleString(ctx.locale, { dateStyle: "full", timeStyle: "medium" });
  header.append(time);
  if (message.edited_timestamp) header.append(el("span", "edited", tr("edited")));
  node.append(avatar(view.author_name, message.author.id), header);
  const body = el("div", "message-body");
  if (view.loading) body.append(el("div", "thinking", tr("thinking", { name: view.author_name })));
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
    const dismiss = el("a", "dismiss", tr("dismiss"));
    dismiss.href = "#";
    dismiss.addEventListener("click", (event) => {
      event.preventDefault();
      ui.dismissed.add(message.id);
      node.remove();
    });
    note.append(`👁 ${tr("onlyYou")} • `, dismiss);
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
        const menu = el("div", "select", c.placeholder || tr("selectMenu"));
        menu.title = tr("selectMenuHelp");
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
    if (outcome.failed) ui.notes.set(messageId, outcome.failure || tr("interactionFailed"));
  } catch (error) {
    ui.notes.set(messageId, String(error.message || error));
  }
  refresh();
}

