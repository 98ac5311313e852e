#!/usr/bin/env node
// `scdv`: sizes the libuv thread pool for this machine, then runs the command line (cli.js). CommonJS, and first,
// because libuv reads the pool's size once, when the pool is first used, and loading ES modules uses it
// (store/thread-pool.cjs). `node pipeline/cli.js …` also works, with libuv's default pool of 4.
'use strict';
const os = require('node:os');
const { sizeThreadPool } = require('./store/thread-pool.cjs');

sizeThreadPool(os.availableParallelism());
import('./cli.js').catch((err) => {
  process.stderr.write(`scdv: cannot load the command line: ${err?.stack ?? err}\n`);
  process.exitCode = 1;
});
