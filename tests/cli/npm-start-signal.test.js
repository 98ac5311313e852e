// A process manager stops `npm start` by signalling the npm process alone (not its process group). npm passes
// SIGTERM and SIGINT on to the shell running the script; a shell that waits for node keeps them to itself, and the
// demo went on serving. The start script therefore execs node: the signal reaches the demo, which shuts down.
// Checked with the project's own start script, its command swapped for a stub that reports the signal.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../../pipeline/paths.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-npm-start-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

for (const signal of /** @type {const} */ (['SIGTERM', 'SIGINT'])) {
  test(`${signal} to the npm start process alone reaches the demo`, { timeout: 30_000 }, async () => {
    const start = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')).scripts.start;
    assert.match(start, /node pipeline\/scdv\.cjs demo$/);
    const stub = path.join(tmp, 'stub.cjs');
    const pidFile = path.join(tmp, `stub-${signal}.pid`);
    fs.writeFileSync(stub, `require('fs').writeFileSync(process.argv[2], String(process.pid));\n` +
      "for (const s of ['SIGTERM', 'SIGINT']) process.on(s, () => { console.log(`demo got ${s}`); process.exit(0); });\n" +
      "console.log('serving'); setInterval(() => {}, 1000);\n");
    fs.writeFileSync(path.join(tmp, 'package.json'), JSON.stringify({ name: 'stub', version: '1.0.0', scripts: { start: start.replace('node pipeline/scdv.cjs demo', `node ${JSON.stringify(stub)} ${JSON.stringify(pidFile)}`) } }));
    const npm = spawn('npm', ['start', '--silent'], { cwd: tmp, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_update_notifier: 'false' } });
    let out = '';
    npm.stdout.on('data', (d) => { out += d; });
    npm.stderr.on('data', (d) => { out += d; });
    const stopped = new Promise((resolve) => npm.once('exit', resolve));
    await new Promise((resolve, reject) => {
      const timer = setInterval(() => { if (out.includes('serving')) { clearInterval(timer); resolve(undefined); } }, 50);
      stopped.then(() => { clearInterval(timer); reject(new Error(`npm start ended before serving:\n${out}`)); });
    });
    npm.kill(signal); // the npm process only, as a process manager does
    await stopped;
    await new Promise((resolve) => setTimeout(resolve, 300));
    const stubPid = Number(fs.readFileSync(pidFile, 'utf8'));
    let alive = true;
    try { process.kill(stubPid, 0); } catch { alive = false; }
    if (alive) process.kill(stubPid, 'SIGKILL'); // the defect: the demo outlived npm
    npm.stdout.destroy();
    npm.stderr.destroy();
    assert.ok(!alive, `the demo (pid ${stubPid}) was still running after npm ended:\n${out}`);
    assert.match(out, new RegExp(`demo got ${signal}`), out);
  });
}
