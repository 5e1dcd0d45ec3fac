// utarwyn/discord-tictactoe (the npm package discord-tictactoe, discord.js 14) as a bot
// for bench.peer, pointed at the emulator: DISCORD_TOKEN, DISCORD_API_BASE
// (http://127.0.0.1:PORT/api/v10) from the environment; the gateway's URL comes from
// GET /gateway/bot as on Discord. The package as shipped (its own login()'s intents and
// defaults), with one addition: its slash command is registered at start (the package
// registers it when an admin mentions the bot with "tttdeploy"; same command, same option),
// and one for the driver: each time it sets a collector on a message (the duel's Accept, then
// one per move, set only once the last answer has come back), the message's id on stdout, so
// that a click is not sent before anything listens for it (a person is never that quick);
// and at each game's end (its events), both players' ids, so that their next /tictactoe does
// not come before the game has left its list (it would be refused: "game in progress").
'use strict';
const {
  Client,
  GatewayIntentBits,
  ApplicationCommandOptionType,
  Message
} = require('discord.js');
const TicTacToe = require('discord-tictactoe');

const collector = Message.prototype.createMessageComponentCollector;
Message.prototype.createMessageComponentCollector = function (...args) {
  const created = collector.apply(this, args);
  process.stdout.write(`${this.id}\n`);
  return created;
};

const base = process.env.DISCORD_API_BASE.replace(/\/+$/, '');
const match = /^(.*)\/v(\d+)$/.exec(base);
if (!match) throw new Error(`DISCORD_API_BASE should end in /v<version>: ${base}`);

// The intents of TicTacToe.login(), for a slash command without the text command.
const client = new Client({
  intents: [
    GatewayIntentBits.Guilds,
    GatewayIntentBits.GuildMessages,
    GatewayIntentBits.GuildMessageReactions
  ],
  rest: { api: match[1], version: match[2] }
});
const game = new TicTacToe({ language: 'en', command: 'tictactoe' });
game.attach(client);
// A game has left its list of games (its players may start another): both players' ids.
game.on('win', ({ winner, loser }) => process.stdout.write(`${winner.id}\n${loser.id}\n`));
game.on('tie', ({ players }) => process.stdout.write(players.map(p => `${p.id}\n`).join('')));
client.once('ready', async () => {
  // What AppCommandRegister.handleDeployMessage sends, globally.
  await client.application.commands.set([
    {
      name: 'tictactoe',
      description: 'Play tic-tac-toe',
      options: [
        {
          type: ApplicationCommandOptionType.User,
          name: 'opponent',
          description: 'The opponent',
          required: false
        }
      ]
    }
  ]);
  console.log('commands registered');
});
const stop = () => client.destroy().finally(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
client.login(process.env.DISCORD_TOKEN);
