// The page's own words (not the bot's: those come translated in its messages), in the
// client languages of the playground's members: English, Japanese and French. Every other
// client language falls back to its language's table (fr-CA -> fr), else to English, as
// Discord's client does for a language it lacks. tr("key", {name}) fills {name}.

"use strict";

const TEXTS = {
  "en-US": {
    title: "Tic-tac-toe playground",
    serverLanguage: "Server language",
    serverLanguageHelp: "Server Settings → Overview → Primary language (a Community server's)",
    textChannels: "Text channels",
    directMessages: "Direct messages",
    withoutBot: "{server}: without the bot",
    withoutBotHelp: "This server never added the bot: only the commands of members who added the app to their account (Alice) reach here.",
    privateHelp: "The bot is not in this conversation: only the commands of members who added the app to their account (Alice) reach here.",
    clientLanguage: "Client language",
    clientLanguageHelp: "User Settings → Language: this member's Discord client language",
    membersActAs: "Members — act as",
    apps: "Apps",
    botHeading: "The bot",
    membersHint: "Click a member to act as them. Right-click (or long-press) a member or the bot for its menu.",
    live: "Live updates",
    channelsButton: "Channels",
    membersButton: "Members",
    placeholder: "Message {channel}: type / for the bot's commands",
    commandsMatching: "Commands matching /{typed}",
    noCommands: "No commands match.",
    send: "Send",
    cancel: "Cancel",
    choose: "Choose…",
    yes: "True",
    no: "False",
    unsupportedOption: "Option type {type} is not supported here",
    readsNoMessages: "The bot reads no messages here: type / and pick one of its commands.",
    unreachable: "Cannot reach the playground: {error}",
    interactionFailed: "This interaction failed",
    actAs: "Act as {name}",
    noUserCommands: "{bot} has no commands for members",
    cannotActAsBot: "The bot acts on its own: act as a member to play it",
    unread: "{count} unread mention(s)",
    permissions: "Permissions: {list}",
    owner: "Server owner",
    used: "{who} used {command}",
    edited: "(edited)",
    thinking: "{name} is thinking…",
    onlyYou: "Only you can see this",
    dismiss: "Dismiss message",
    empty: "No messages yet. Type / below to start a game.",
    selectMenu: "Make a selection",
    selectMenuHelp: "Select menus cannot be used in the playground",
    spoiler: "Spoiler: click to show",
  },
  ja: {
    title: "三目並べプレイグラウンド",
    serverLanguage: "サーバーの言語",
    serverLanguageHelp: "サーバー設定 → 概要 → 主要言語（コミュニティサーバーの設定）",
    textChannels: "テキストチャンネル",
    directMessages: "ダイレクトメッセージ",
    withoutBot: "{server}：ボットなし",
    withoutBotHelp: "このサーバーにはボットが追加されていません。アプリを自分のアカウントに追加したメンバー（Alice）のコマンドだけが使えます。",
    privateHelp: "ボットはこの会話に参加していません。アプリを自分のアカウントに追加したメンバー（Alice）のコマンドだけが使えます。",
    clientLanguage: "クライアントの言語",
    clientLanguageHelp: "ユーザー設定 → 言語：このメンバーの Discord クライアントの言語",
    membersActAs: "メンバー — 操作する人",
    apps: "アプリ",
    botHeading: "ボット",
    membersHint: "メンバーをクリックすると、その人として操作します。メンバーやボットを右クリック（または長押し）すると、メニューが開きます。",
    live: "ライブ更新",
    channelsButton: "チャンネル",
    membersButton: "メンバー",
    placeholder: "{channel} へメッセージ：/ でボットのコマンド",
    commandsMatching: "/{typed} に一致するコマンド",
    noCommands: "一致するコマンドはありません。",
    send: "送信",
    cancel: "キャンセル",
    choose: "選択…",
    yes: "はい",
    no: "いいえ",
    unsupportedOption: "オプションの種類 {type} はここでは使えません",
    readsNoMessages: "ボットはここでメッセージを読みません。/ を入力してコマンドを選んでください。",
    unreachable: "プレイグラウンドに接続できません：{error}",
    interactionFailed: "インタラクションに失敗しました",
    actAs: "{name} として操作",
    noUserCommands: "{bot} にはメンバー向けのコマンドがありません",
    cannotActAsBot: "ボットは自分で動きます。対戦するにはメンバーとして操作してください",
    unread: "未読のメンション {count} 件",
    permissions: "権限：{list}",
    owner: "サーバーオーナー",
    used: "{who} が {command} を使用しました",
    edited: "（編集済み）",
    thinking: "{name} が考えています…",
    onlyYou: "これはあなただけに表示されています",
    dismiss: "メッセージを削除",
    empty: "まだメッセージはありません。下に / を入力してゲームを始めましょう。",
    selectMenu: "選択してください",
    selectMenuHelp: "プレイグラウンドではセレクトメニューを使えません",
    spoiler: "ネタバレ：クリックで表示",
  },
  fr: {
    title: "Bac à sable du morpion",
    serverLanguage: "Langue du serveur",
    serverLanguageHelp: "Paramètres du serveur → Vue d'ensemble → Langue principale (d'un serveur Communauté)",
    textChannels: "Salons textuels",
    directMessages: "Messages privés",
    withoutBot: "{server} : sans le bot",
    withoutBotHelp: "Ce serveur n'a jamais ajouté le bot : seules les commandes des membres qui ont ajouté l'app à leur compte (Alice) y fonctionnent.",
    privateHelp: "Le bot ne fait pas partie de cette conversation : seules les commandes des membres qui ont ajouté l'app à leur compte (Alice) y fonctionnent.",
    clientLanguage: "Langue du client",
    clientLanguageHelp: "Paramètres utilisateur → Langue : la langue du client Discord de ce membre",
    membersActAs: "Membres — agir en tant que",
    apps: "Applications",
    botHeading: "Le bot",
    membersHint: "Cliquez sur un membre pour agir en son nom. Clic droit (ou appui long) sur un membre ou sur le bot pour ouvrir son menu.",
    live: "Mises à jour en direct",
    channelsButton: "Salons",
    membersButton: "Membres",
    placeholder: "Envoyer un message dans {channel} : tapez / pour les commandes du bot",
    commandsMatching: "Commandes correspondant à /{typed}",
    noCommands: "Aucune commande ne correspond.",
    send: "Envoyer",
    cancel: "Annuler",
    choose: "Choisir…",
    yes: "Vrai",
    no: "Faux",
    unsupportedOption: "Le type d'option {type} n'est pas pris en charge ici",
    readsNoMessages: "Le bot ne lit pas les messages ici : tapez / et choisissez une de ses commandes.",
    unreachable: "Impossible de joindre le bac à sable : {error}",
    interactionFailed: "Échec de l'interaction",
    actAs: "Agir en tant que {name}",
    noUserCommands: "{bot} n'a pas de commande pour les membres",
    cannotActAsBot: "Le bot agit seul : agissez en tant que membre pour jouer contre lui",
    unread: "{count} mention(s) non lue(s)",
    permissions: "Permissions : {list}",
    owner: "Propriétaire du serveur",
    used: "{who} a utilisé {command}",
    edited: "(modifié)",
    thinking: "{name} réfléchit…",
    onlyYou: "Vous seul·e pouvez voir ceci",
    dismiss: "Ignorer le message",
    empty: "Aucun message pour l'instant. Tapez / ci-dessous pour lancer une partie.",
    selectMenu: "Faites un choix",
    selectMenuHelp: "Les menus de sélection ne sont pas utilisables dans le bac à sable",
    spoiler: "Spoiler : cliquez pour afficher",
  },
};

function textsFor(locale) {
  return TEXTS[locale] || TEXTS[String(locale).split("-")[0]] || TEXTS["en-US"];
}

// The acting member's words; `locale` defaults to their client language (app.js).
function tr(key, vars = {}, locale = undefined) {
  const table = textsFor(locale || (typeof myLocale === "function" ? myLocale() : "en-US"));
  const text = table[key] ?? TEXTS["en-US"][key] ?? key;
  return text.replace(/\{(\w+)\}/g, (whole, name) => (name in vars ? String(vars[name]) : whole));
}

// The static page's words: data-text (text), data-text-title, data-text-label (aria-label).
function translatePage() {
  for (const node of document.querySelectorAll("[data-text]")) node.textContent = tr(node.dataset.text);
  for (const node of document.querySelectorAll("[data-text-title]")) node.title = tr(node.dataset.textTitle);
  for (const node of document.querySelectorAll("[data-text-label]")) {
    node.setAttribute("aria-label", tr(node.dataset.textLabel));
  }
  document.title = tr("title");
}

window.Texts = { TEXTS, tr, translatePage };
