// README.md's shell blocks as a user copies them: every `scdv` command is written `npx scdv …` (a bare `scdv` is
// "command not found" in a fresh shell), names a command that exists with options that command declares, and the
// cheap ones run as written; `npx scdv` itself answers from the clone without npm rebuilding the native addon.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../../pipeline/paths.js';
import { COMMANDS } from '../../pipeline/commands/registry.js';

const README = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');

/**
 * The logical lines of every ```sh block: a line ending in `\` and a synopsis line that starts with spaces and
 * `[` continue the previous one.
 * @param {string} readme
 * @returns {{at: number, text: string}[]}
 */
export function shellLines(readme) {
  /** @type {{at: number, text: string}[]} */
  const out = [];
  let inSh = false;
  let inFence = false;
  let joinNext = false;
  readme.split('\n').forEach((line, i) => {
    if (line.startsWith('```')) {
      inSh = !inFence && line.trim() === '```sh';
      inFence = !inFence;
      joinNext = false;
      return;
    }
    if (!inSh) return;
    if ((joinNext || /^\s+\[/.test(line)) && out.length) out[out.length - 1].text += ' ' + line.trim();
    else out.push({ at: i + 1, text: line });
    joinNext = line.endsWith('\\');
  });
  return out;
}

/**
 * A line's command without a host prompt (`web1$ `) or a trailing comment.
 * @param {string} text
 */
const commandOf = (text) => text.replace(/^\w+\$ /, '').replace(/\s+#\s.*$/, '').trim();

/**
 * The words of a command line (quotes kept together, not unquoted: only flags and command names are looked at).
 * @param {string} cmd
 */
const words = (cmd) => cmd.match(/"[^"]*"|'[^']*'|\S+/g) ?? [];

/**
 * Problems with one `npx scdv …` line: an unknown command or subcommand, or a flag the command does not declare.
 * @param {string} cmd e.g. 'npx scdv train --corpus c.jsonl [--clusters 60]'
 * @returns {Promise<string[]>}
 */
async function problems(cmd) {
  const [, , name, maybeSub, ...rest] = words(cmd);
  if (name === '--version' || name === '--help') return [];
  const entry = COMMANDS[name];
  if (!entry) return [`unknown command '${name}'`];
  let spec = /** @type {import('../../pipeline/commands/define.js').CommandSpec} */ ((await entry.load()).command);
  let args = [maybeSub, ...rest];
  let label = name;
  if (spec.subcommands && maybeSub && !maybeSub.startsWith('-') && !maybeSub.startsWith('[')) {
    const sub = spec.subcommands[maybeSub];
    if (!sub) return [`unknown subcommand '${name} ${maybeSub}'`];
    spec = sub;
    args = rest;
    label = `${name} ${maybeSub}`;
  }
  const known = new Set([...(spec.options ?? []).map((o) => o.flags.split(/[ ,]/)[0]), '--help']);
  return args.map((w) => /^\[*(--[a-z0-9-]+)/.exec(w ?? '')?.[1]).filter((f) => f && !known.has(f))
    .map((f) => `'${label}' has no option ${f}`);
}

test('every scdv command in the README is written npx scdv, so that it runs in a fresh shell', () => {
  const bare = shellLines(README).filter((l) => /^scdv\s/.test(commandOf(l.text)));
  assert.deepEqual(bare.map((l) => `README.md:${l.at}: ${l.text}`), []);
  assert.ok(shellLines(README).filter((l) => commandOf(l.text).startsWith('npx scdv ')).length >= 30, 'the README has its scdv commands');
});

test('every npx scdv line names a command that exists, with options that command declares', async () => {
  const found = [];
  for (const l of shellLines(README)) {
    const cmd = commandOf(l.text);
    if (!cmd.startsWith('npx scdv ')) continue;
    for (const p of await problems(cmd)) found.push(`README.md:${l.at}: ${p}: ${cmd}`);
  }
  assert.deepEqual(found, []);
});

test('the dry parse catches an unknown command, subcommand and option', async () => {
  assert.deepEqual(await problems('npx scdv trian --corpus c'), ["unknown command 'trian'"]);
  assert.deepEqual(await problems('npx scdv inspect cluster --model m'), ["unknown subcommand 'inspect cluster'"]);
  assert.deepEqual(await problems('npx scdv index --model m [--batchsize 5]'), ["'index' has no option --batchsize"]);
  assert.deepEqual(await problems('npx scdv inspect clusters --model m [--flaged]'), ["'inspect clusters' has no option --flaged"]);
});

/**
 * bash running `line` in the clone, with a fresh npm cache (a first `npx`), as a user's fresh shell would.
 * @param {string} line
 * @param {string} cache
 */
function runAsCopied(line, cache) {
  const t0 = Date.now();
  const r = spawnSync('bash', ['-c', line], {
    cwd: REPO_ROOT, encoding: 'utf8', timeout: 60_000,
    env: { ...process.env, npm_config_cache: cache, npm_config_update_notifier: 'false', npm_config_audit: 'false' },
  });
  return { ...r, seconds: (Date.now() - t0) / 1000 };
}

test('npm does not rebuild the native addon when npx scdv runs the clone (an install script of our own)', () => {
  // npm gives a package with a binding.gyp and no install script `node-gyp rebuild` as its install script, and
  // `npx scdv` in the clone installs the clone into npm's cache: 8-16 s, and offline it deletes build/.
  const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8'));
  assert.ok(pkg.scripts.install || pkg.scripts.preinstall, 'package.json has an install script of its own');
  assert.doesNotMatch(pkg.scripts.install ?? '', /node-gyp/);
  const addon = path.join(REPO_ROOT, 'build', 'Release', 'scdv_mecab.node');
  const before = fs.statSync(addon).mtimeMs;
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'npx-cache-'));
  try {
    const r = runAsCopied('npx scdv --version', cache);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), pkg.version);
    assert.equal(fs.statSync(addon).mtimeMs, before, 'the addon was not rebuilt');
    assert.ok(r.seconds < 10, `first npx scdv --version took ${r.seconds} s`);
    // From a folder below the clone npx takes node_modules/.bin/scdv (linked by set-up; without it npx would look
    // for a package `scdv` in the registry, so that case is checked on the link rather than run).
    const link = path.join(REPO_ROOT, 'node_modules', '.bin', 'scdv');
    assert.equal(fs.realpathSync(link), path.join(REPO_ROOT, 'pipeline', 'scdv.cjs'));
    const sub = runAsCopied('cd tests && npx scdv --version', cache);
    assert.equal(sub.stdout.trim(), pkg.version, sub.stderr);
  } finally {
    fs.rmSync(cache, { recursive: true, force: true });
  }
});

test('the cheap README commands run as copied', () => {
  const cheap = shellLines(README).map((l) => commandOf(l.text))
    .filter((c) => /^npx scdv (tokenize --text|completion bash)/.test(c) && !c.includes('…'));
  assert.ok(cheap.length >= 2, cheap.join('\n'));
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'npx-cache-'));
  try {
    for (const c of cheap) {
      const r = runAsCopied(c, cache);
      assert.equal(r.status, 0, `${c}\n${r.stderr}`);
      assert.ok(r.stdout.trim().length > 0, `${c} printed nothing`);
    }
  } finally {
    fs.rmSync(cache, { recursive: true, force: true });
  }
});
