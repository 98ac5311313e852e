#!/usr/bin/env node
// `scdv`'s command line (started by scdv.cjs). Each subcommand lives in
// commands/<name>.js.
import fs from 'node:fs';
import { Command, CommanderError } from 'commander';
import { ScdvError } from './errors.js';
import { COMMANDS } from './commands/registry.js';
import { defineCommand } from './commands/define.js';

const VERSION = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;

const FOOTER = `
Run scdv <command> --help for a command's options, their defaults and an example.
Shell completion: eval "$(scdv completion bash)" (README "The scdv command").

Environment:
  REDIS_URL   redis://host:port, rediss://…, or unix:///path.sock; unset: a private redis-server is started
`;

/**
 * Every command by name and summary; only the one being run (or asked about) is loaded with its options, so
 * that `scdv worker …` does not load the server and `scdv --help` loads nothing.
 * @param {string[]} argv
 */
async function buildProgram(argv) {
  const program = new Command('scdv')
    .description('scdv — SCDV document vectors for Japanese articles')
    .version(VERSION, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show the help')
    .helpCommand('help [command]', 'show the help of a command')
    .showSuggestionAfterError(true)
    .showHelpAfterError('(add --help for the options and an example)')
    .exitOverride()
    .configureOutput({ outputError: (str, write) => write(usageMessage(str)) })
    .addHelpText('after', FOOTER);
  const wanted = argv[0] === 'help' ? argv[1] : argv[0];
  for (const [name, entry] of Object.entries(COMMANDS)) {
    const cmd = program.command(name).summary(entry.summary);
    if (name === wanted) defineCommand(cmd, (await entry.load()).command);
  }
  return program;
}

/**
 * commander's "error: unknown option '--batchsize'\n(Did you mean --batch-size?)" as one `scdv: …` line.
 * @param {string} str
 */
const usageMessage = (str) => str.replace(/^error: /, 'scdv: ').replace(/\n\(Did you mean (.*)\?\)/, ' (did you mean $1?)');

async function main() {
  const argv = process.argv.slice(2);
  const program = await buildProgram(argv);
  if (!argv.length) {
    program.outputHelp();
    return;
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    // Help and version end with 0; a usage error (unknown command or option, missing value) with 2.
    process.exitCode = err.exitCode === 0 ? 0 : 2;
  }
}

// Whatever escapes everything else ends the process with its stack (message and frames) only: Node's own
// report would print the error object whole, and a Redis error carries its command's arguments (AUTH's password).
const fatal = (/** @type {any} */ err) => {
  process.stderr.write(err?.name === 'ReplyError'
    ? `scdv: Redis refused a command: ${err.message}\n` // e.g. WRONGPASS: check the credentials in REDIS_URL
    : `scdv: unexpected error (a bug; please report it):\n${err?.stack ?? err}\n`);
  process.exit(1);
};
process.on('uncaughtException', fatal);
// `scdv --help | head`: a reader that stops early is not an error.
process.stdout.on('error', (err) => { if (/** @type {any} */ (err).code === 'EPIPE') process.exit(0); else fatal(err); });
process.on('unhandledRejection', fatal);

main().catch((err) => {
  if (err instanceof ScdvError) {
    process.stderr.write(`scdv: ${err.message}\n`);
    // A value the command line gave that cannot be used (a model name with a slash) is a usage error too.
    process.exitCode = err.code === 'SCDV_USAGE' || err.code === 'SCDV_MODEL_NAME_INVALID' ? 2 : 1;
  } else {
    process.stderr.write(`scdv: unexpected error (a bug; please report it):\n${err?.stack ?? err}\n`);
    process.exitCode = 1;
  }
});
