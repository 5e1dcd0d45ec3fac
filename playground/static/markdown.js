// Discord's markdown, drawn as DOM nodes: every piece of text goes in through textContent
// or a text node, never as HTML, so nothing a message holds can become markup.
//
// Blocks: ``` code ```, # / ## / ### headers, -# subtext, > and >>> quotes, - / * / 1. lists.
// Inline: \escapes, `code`, **bold**, __underline__, *italic* / _italic_, ~~strike~~,
// ||spoilers||, <@user> <@&role> <#channel> @everyone @here mentions, <t:unix:style>
// timestamps, <:custom:emoji>, [masked](https://links) and bare https:// links.

(() => {
"use strict";

const INLINE = [
  ["escape", /\\([^A-Za-z0-9\s])/],
  ["code", /`([^`]+)`/],
  ["bold", /\*\*([\s\S]+?)\*\*(?!\*)/],
  ["underline", /__([\s\S]+?)__(?!_)/],
  ["italic", /\*(?!\s)([\s\S]*?[^\s*])\*(?!\*)/],
  ["italic", /\b_(?!\s)([\s\S]*?[^\s_])_\b/],
  ["strike", /~~([\s\S]+?)~~/],
  ["spoiler", /\|\|([\s\S]+?)\|\|/],
  ["user", /<@!?(\d+)>/],
  ["role", /<@&(\d+)>/],
  ["channel", /<#(\d+)>/],
  ["time", /<t:(-?\d{1,13})(?::([tTdDfFsSR]))?>/],
  ["emoji", /<a?:(\w{2,32}):(\d+)>/],
  ["everyone", /@(everyone|here)\b/],
  ["link", /\[([^\[\]]+)\]\((https?:\/\/[^\s()]+)\)/],
  ["url", /https?:\/\/[^\s<]+[^\s<.,:;"')\]]/],
];

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

// ctx: { names: {users, roles, channels}, me: member id, locale, guild: server id,
//        jump(channelId, messageId): show that message }
function inline(text, ctx, into) {
  let rest = text;
  while (rest.length) {
    let best = null;
    for (const [kind, pattern] of INLINE) {
      const found = pattern.exec(rest);
      if (found && (best === null || found.index < best.found.index)) best = { kind, found };
    }
    if (best === null) {
      into.append(document.createTextNode(rest));
      return into;
    }
    const { kind, found } = best;
    if (found.index > 0) into.append(document.createTextNode(rest.slice(0, found.index)));
    into.append(inlineNode(kind, found, ctx));
    rest = rest.slice(found.index + found[0].length);
  }
  return into;
}

const MESSAGE_LINK = /^https:\/\/discord\.com\/channels\/(\d+)\/(\d+)(?:\/(\d+))?$/;

const WRAP = { bold: "strong", underline: "u", italic: "em", strike: "s" };

function inlineNode(kind, found, ctx) {
  if (kind in WRAP) return inline(found[1], ctx, el(WRAP[kind]));
  switch (kind) {
    case "escape":
      return document.createTextNode(found[1]);
    case "code":
      return el("code", "inline-code", found[1]);
    case "spoiler": {
      const node = inline(found[1], ctx, el("span", "spoiler"));
      node.title = window.Texts ? Texts.tr("spoiler") : "Spoiler: click to show";
      node.addEventListener("click", () => node.classList.add("shown"));
      return node;
    }
    case "user": {
      const name = ctx.names.users[found[1]];
      const node = el("span", "mention", name ? "@" + name : "@unknown-user");
      if (found[1] === ctx.me) node.classList.add("mention-me");
      return node;
    }
    case "role": {
      const name = ctx.names.roles[found[1]];
      return el("span", "mention", name ? "@" + name : "@deleted-role");
    }
    case "channel": {
      const name = ctx.names.channels[found[1]];
      return el("span", "mention", name ? "#" + name : "#unknown");
    }
    case "everyone":
      return el("span", "mention", found[0]);
    case "time":
      return timestamp(Number(found[1]), found[2] || "f", ctx.locale);
    case "emoji":
      return el("span", "custom-emoji", ":" + found[1] + ":");
    case "link": {
      const node = inline(found[1], ctx, el("a"));
      return safeLink(node, found[2]);
    }
    case "url": {
      const jump = MESSAGE_LINK.exec(found[0]);
      if (jump && jump[1] === ctx.guild && ctx.names.channels[jump[2]]) {
        // Discord shows a link to a message of this server as a chip: "#games › 💬"
        const chip = el("a", "mention message-link", `#${ctx.names.channels[jump[2]]} › 💬`);
        chip.href = "#";
        chip.title = found[0];
        chip.addEventListener("click", (event) => {
          event.preventDefault();
          ctx.jump(jump[2], jump[3] || null);
        });
        return chip;
      }
      return safeLink(el("a", "", found[0]), found[0]);
    }
  }
  return document.createTextNode(found[0]);
}

function safeLink(node, href) {
  try {
    const url = new URL(href);
    if (url.protocol === "https:" || url.protocol === "http:") {
      node.href = url.href;
      node.target = "_blank";
      node.rel = "noopener noreferrer";
      node.title = url.href;
    }
  } catch (_) {
    // not a URL after all: plain text in an <a> without href
  }
  return node;
}

const TIME_STYLES = {
  t: { timeStyle: "short" },
  T: { timeStyle: "medium" },
  d: { dateStyle: "short" },
  D: { dateStyle: "long" },
  f: { dateStyle: "long", timeStyle: "short" },
  F: { dateStyle: "full", timeStyle: "short" },
  s: { dateStyle: "short", timeStyle: "short" },
  S: { dateStyle: "short", timeStyle: "medium" },
};

// A <t:...> timestamp in the reader's client language; R ones are kept up to date by
// refreshTimestamps().
function timestamp(seconds, style, locale) {
  const node = el("span", "timestamp");
  node.dataset.seconds = String(seconds);
  node.dataset.style = style;
  node.dataset.locale = locale;
  const moment = new Date(seconds * 1000);
  node.title = moment.toLocaleString(locale, { dateStyle: "full", timeStyle: "long" });
  node.textContent = formatTime(seconds, style, locale);
  return node;
}

function formatTime(seconds, style, locale) {
  if (style !== "R") {
    return new Date(seconds * 1000).toLocaleString(locale, TIME_STYLES[style] || TIME_STYLES.f);
  }
  const delta = seconds - Date.now() / 1000;
  const units = [
    ["year", 31536000],
    ["month", 2592000],
    ["day", 86400],
    ["hour", 3600],
    ["minute", 60],
    ["second", 1],
  ];
  const [unit, size] = units.find(([, s]) => Math.abs(delta) >= s) || ["second", 1];
  const format = new Intl.RelativeTimeFormat(locale, { numeric: "auto" });
  return format.format(Math.round(delta / size), unit);
}

function refreshTimestamps(root) {
  for (const node of root.querySelectorAll(".timestamp[data-style='R']")) {
    node.textContent = formatTime(Number(node.dataset.seconds), "R", node.dataset.locale);
  }
}

function markdown(text, ctx) {
  const root = el("div", "markdown");
  const lines = text.split("\n");
  let list = null;
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i];
    if (line.startsWith("```")) {
      const body = [];
      const first = line.slice(3);
      const closing = first.indexOf("```");
      if (closing >= 0) {
        root.append(el("pre", "code-block", first.slice(0, closing)));
        continue;
      }
      i++;
      while (i < lines.length && !lines[i].includes("```")) body.push(lines[i++]);
      if (i < lines.length) body.push(lines[i].slice(0, lines[i].indexOf("```")));
      root.append(el("pre", "code-block", body.join("\n").replace(/^\w+\n/, "")));
      list = null;
      continue;
    }
    if (line.startsWith(">>> ")) {
      const quote = el("blockquote");
      quote.append(markdown([line.slice(4), ...lines.slice(i + 1)].join("\n"), ctx));
      root.append(quote);
      return root;
    }
    let holder = root;
    if (line.startsWith("> ")) {
      holder = el("blockquote");
      root.append(holder);
      line = line.slice(2);
    }
    const header = /^(#{1,3}) (.+)$/.exec(line);
    const item = /^\s*(?:[-*]|(\d+)\.) (.+)$/.exec(line);
    if (header) {
      holder.append(inline(header[2], ctx, el("h" + header[1].length)));
      list = null;
    } else if (line.startsWith("-# ")) {
      holder.append(inline(line.slice(3), ctx, el("div", "subtext")));
      list = null;
    } else if (item) {
      const kind = item[1] ? "ol" : "ul";
      if (list === null || list.tagName.toLowerCase() !== kind || holder !== root) {
        list = el(kind);
        if (item[1]) list.start = Number(item[1]);
        holder.append(list);
      }
      list.append(inline(item[2], ctx, el("li")));
    } else {
      holder.append(inline(line, ctx, el("div", line.trim() ? "line" : "line empty")));
      list = null;
    }
  }
  return root;
}

window.Markdown = { markdown, inline, refreshTimestamps, el };
})();
