// The slash-command box (the acting member's commands, localized, with their options)
// and the member context menu (Apps: the bot's user commands).

"use strict";

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
  menu.replaceChildren(el("div", "menu-title", tr("commandsMatching", { typed })));
  if (offered.length === 0) menu.append(el("div", "menu-empty", tr("noCommands")));
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
  const send = el("button", "btn primary", tr("send"));
  send.type = "submit";
  send.id = "command-send";
  const cancel = el("button", "btn secondary", tr("cancel"));
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
  const blank = () => new Option(option.required ? tr("choose") : "—", "");
  if (option.choices) {
    input = el("select");
    input.append(blank());
    for (const choice of option.choices) input.append(new Option(shownName(choice), JSON.stringify(choice.value)));
  } else if (option.type === 5) {
    input = el("select");
    input.append(blank(), new Option(tr("yes"), "true"), new Option(tr("no"), "false"));
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
    input = el("span", "unknown-component", tr("unsupportedOption", { type: option.type }));
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
    const exact = ui.commands.chat_input.find((c) => shownName(c) === typed || c.name === typed);
    const first = $("command-menu").hidden ? null : $("command-menu").querySelector(".command-choice");
    if (exact) pickCommand(exact);
    else if (first) first.click(); // Enter takes the first command the menu shows
    else if (input.value.trim()) showError(tr("readsNoMessages"));
    return;
  }
  const body = { as: ui.me, channel: ui.channel, name: ui.picked.name, options: optionValues() };
  $("command-send").disabled = true;
  try {
    const outcome = await api("/api/commands", body);
    closeCommand();
    if (outcome.failed) showError(outcome.failure || tr("interactionFailed"));
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

// -- the member context menu (right-click, long press): Apps lists the bot's user commands --

function openMemberMenu(event, target) {
  event.preventDefault();
  const menu = $("context-menu");
  const items = [el("div", "menu-title", target.name)];
  if (!target.bot) {
    const act = el("button", "menu-item act", tr("actAs", { name: target.name }));
    act.addEventListener("click", () => {
      closeMenus();
      closeDrawers();
      switchTo(target.id, ui.channel);
    });
    items.push(act);
  }
  items.push(el("div", "menu-title", tr("apps")));
  if (ui.commands.user.length === 0) {
    const none = el("button", "menu-item", tr("noUserCommands", { bot: ui.state.bot.name }));
    none.disabled = true;
    items.push(none);
  }
  for (const command of ui.commands.user) {
    const item = el("button", "menu-item app", shownName(command));
    item.dataset.name = command.name;
    item.addEventListener("click", async () => {
      closeMenus();
      closeDrawers();
      try {
        const outcome = await api("/api/user-commands", {
          as: ui.me,
          channel: ui.channel,
          name: command.name,
          target: target.id,
        });
        if (outcome.failed) showError(outcome.failure || tr("interactionFailed"));
      } catch (error) {
        showError(String(error.message || error));
      }
      refresh();
    });
    items.push(item);
  }
  for (const item of items) if (item.tagName === "BUTTON") item.type = "button";
  menu.replaceChildren(...items);
  menu.style.left = `${Math.max(0, Math.min(event.clientX, window.innerWidth - 240))}px`;
  menu.style.top = `${Math.max(0, Math.min(event.clientY, window.innerHeight - 200))}px`;
  menu.hidden = false;
}

function closeMenus() {
  $("context-menu").hidden = true;
}

