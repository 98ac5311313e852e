#!/usr/bin/env node
// `scdv`: the command line (cli.js). CommonJS so that it runs as a `bin` on any Node without flags; before session
// 14 it also sized libuv's pool here, when the store's searches ran there (they now have threads of their own:
// store/search-threads.js). `node pipeline/cli.js …` works the same.
'use strict';
import('./cli.js').catch((err) => {
  process.stderr.write(`scdv: cannot load the command line: ${err?.stack ?? err}\n`);
  process.exitCode = 1;
});
