// `scdv`'s commands as one commander program, and one run of it over an argument list: what pipeline/cli.js runs in
// its process (which adds the handling of errors nothing else caught), and what tests/cli/help.test.js runs for
// every command's --help in one process.
import fs from 'node:fs';
import { Command, CommanderError } from 'commander';
import { COMMANDS } from './registry.js';
import { defineCommand } from './define.js';

const VERSION = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;

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

/**
 * Runs `scdv ...argv`: the help without arguments, else the command named. Help and version end with 0, a usage error
 * (unknown command or option, missing value) with 2; a command that ran returns undefined (it sets process.exitCode
 * itself when it fails) and a command's error is thrown.
 * @param {string[]} argv
 * @returns {Promise<number | undefined>}
 */
export async function runProgram(argv) {
  const program = await buildProgram(argv);
  if (!argv.length) {
    program.outputHelp();
    return 0;
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
    return undefined;
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    return err.exitCode === 0 ? 0 : 2;
  }
}
