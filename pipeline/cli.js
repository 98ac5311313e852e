#!/usr/bin/env node
// `scdv`'s command line (started by scdv.cjs): the program of commands/program.js in this process, and what it does
// with the errors nothing else caught. Each subcommand lives in commands/<name>.js.
import { ScdvError } from './errors.js';
import { runProgram } from './commands/program.js';

async function main() {
  const code = await runProgram(process.argv.slice(2));
  if (code !== undefined) process.exitCode = code;
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
