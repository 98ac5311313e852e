#!/usr/bin/env node
// `scdv`: the command line (cli.js). CommonJS so that it runs as a `bin` on any Node without flags. Nothing needs
// setting before the ES modules load: the store's searches have threads of their own (store/search-threads.js),
// not libuv's pool. `node pipeline/cli.js …` works the same.
'use strict';
import('./cli.js').catch((err) => {
  process.stderr.write(`scdv: cannot load the command line: ${err?.stack ?? err}\n`);
  process.exitCode = 1;
});
