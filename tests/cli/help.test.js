// `scdv` as a newcomer meets it: --help for every registered command and subcommand (options, their defaults
// from pipeline/config.js, an example), --version, "did you mean" for typos, and shell completion that works in bash.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../../pipeline/paths.js';
import { CLI_DEFAULTS, DEFAULT_CONFIG } from '../../pipeline/config.js';
import { COMMANDS } from '../../pipeline/commands/registry.js';

const CLI = path.join(REPO_ROOT, 'pipeline', 'cli.js');

/** @param {string[]} args */
function scdv(args) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * `scdv …args` for each of `runs`, all in one process (the program pipeline/cli.js runs: commands/program.js), its
 * output and exit code per run: the help of every command without a process start for each.
 * @param {string[][]} runs
 * @returns {{code: number | undefined, stdout: string, stderr: string}[]}
 */
function scdvInOneProcess(runs) {
  const script = `import { runProgram } from ${JSON.stringify(path.join(REPO_ROOT, 'pipeline', 'commands', 'program.js'))};
const [write, writeErr] = [process.stdout.write, process.stderr.write];
const results = [];
for (const args of ${JSON.stringify(runs)}) {
  const r = { stdout: '', stderr: '' };
  process.stdout.write = (s) => { r.stdout += s; return true; };
  process.stderr.write = (s) => { r.stderr += s; return true; };
  try { r.code = await runProgram(args); } finally { process.stdout.write = write; process.stderr.write = writeErr; }
  results.push(r);
}
process.stdout.write(JSON.stringify(results));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', maxBuffer: 64 << 20 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

/** @param {string} key e.g. 'train.gmm.n_components' */
const configValue = (key) => key.split('.').reduce((/** @type {any} */ v, k) => v[k], DEFAULT_CONFIG);

/** Every command and subcommand path (['inspect', 'clusters'], …) with its spec, from the registry. */
async function everyCommand() {
  /** @type {{path: string[], spec: import('../../pipeline/commands/define.js').CommandSpec}[]} */
  const all = [];
  for (const [name, entry] of Object.entries(COMMANDS)) {
    const { command } = await entry.load();
    assert.ok(command, `commands/${name} exports its spec as \`command\``);
    all.push({ path: [name], spec: command });
    for (const [sub, spec] of Object.entries(command.subcommands ?? {})) all.push({ path: [name, sub], spec });
  }
  return all;
}

test('scdv --help (and scdv alone) lists every command', () => {
  for (const args of [['--help'], []]) {
    const r = scdv(args);
    assert.equal(r.code, 0, r.stderr);
    for (const name of Object.keys(COMMANDS)) assert.match(r.stdout, new RegExp(`^  ${name}\\b`, 'm'), `${name} in scdv ${args.join(' ')}`);
    assert.match(r.stdout, /scdv completion bash/);
  }
});

test('scdv <command> --help works for every command and subcommand: its options, their defaults, an example', async () => {
  const all = await everyCommand();
  assert.ok(all.some((c) => c.path.join(' ') === 'inspect clusters') && all.some((c) => c.path.join(' ') === 'collection delete'));
  let defaultsShown = 0;
  const [trainHelp, helpIndex, ...helps] = scdvInOneProcess([['train', '--help'], ['help', 'index'], ...all.map(({ path: p }) => [...p, '--help'])]);
  // The same program as a process of its own runs: the same help.
  assert.equal(scdv(['train', '--help']).stdout, trainHelp.stdout);
  for (const [i, { path: p, spec }] of all.entries()) {
    const r = helps[i];
    const where = `scdv ${p.join(' ')} --help`;
    assert.equal(r.code, 0, `${where}: ${r.stderr}`);
    assert.match(r.stdout, new RegExp(`^Usage: scdv ${p.join(' ')}\\b`), where);
    assert.match(r.stdout, new RegExp(`^Examples?:\\n  \\$ (\\S+=\\S+ )*scdv ${p.join(' ')}\\b`, 'm'), `${where} has an example of itself`);
    // Help wraps long lines: compare with runs of spaces and line breaks as one space.
    const flat = r.stdout.replace(/\s+/g, ' ');
    for (const o of spec.options ?? []) {
      const flag = o.flags.split(' ')[0];
      if (o.hidden) {
        assert.doesNotMatch(r.stdout, new RegExp(`${flag}\\b`), `${where} hides ${flag}`);
        continue;
      }
      assert.ok(flat.includes(` ${o.flags} `), `${where} lists ${o.flags}`);
      if (o.config) {
        const value = configValue(o.config);
        const shown = `default: ${value === null && o.nullValue ? o.nullValue : JSON.stringify(value)} from config ${o.config}`;
        assert.ok(flat.includes(shown), `${where}: ${flag} shows "${shown}"`);
        defaultsShown++;
      }
      if (o.default !== undefined) {
        assert.ok(flat.includes(`(default: "${o.default}")`), `${where}: ${flag} shows its default "${o.default}"`);
        defaultsShown++;
      }
    }
  }
  assert.ok(defaultsShown > 20, `${defaultsShown} defaults shown`);
  // Spot checks against pipeline/config.js, the one place of the defaults.
  const train = trainHelp.stdout.replace(/\s+/g, ' ');
  assert.equal(DEFAULT_CONFIG.train.gmm.n_components, null);
  assert.match(train, /--clusters <k> GMM clusters \(topics\); auto: √\(N\/2\) for N training documents, from 2 to 60 \(default: auto from config train\.gmm\.n_components\)/);
  assert.match(train, new RegExp(`--name <name> .*\\(default: "${CLI_DEFAULTS.modelName}"\\)`));
  assert.equal(helpIndex.code, 0, helpIndex.stderr);
  assert.match(helpIndex.stdout.replace(/\s+/g, ' '), new RegExp(`--batch-size <b> .*default: ${DEFAULT_CONFIG.index.writeBatchSize} from config index\\.writeBatchSize`));
});

test("scdv --version prints package.json's version", () => {
  const { version } = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8'));
  for (const flag of ['--version', '-V']) {
    const r = scdv([flag]);
    assert.equal(r.code, 0);
    assert.equal(r.stdout, `${version}\n`);
  }
});

test('a typo in a command, subcommand or option: exit 2 and "did you mean" naming the right one', () => {
  const cases = [
    [['trian'], /^scdv: unknown command 'trian' \(did you mean train\?\)\n/],
    [['index', '--batchsize', '5'], /^scdv: unknown option '--batchsize' \(did you mean --batch-size\?\)\n/],
    [['inspect', 'clustrs', '--model', 'x'], /^scdv: unknown command 'clustrs' \(did you mean clusters\?\)\n/],
    [['train', '--corpus', 'c.jsonl', '--min_count', '3'], /^scdv: unknown option '--min_count' \(did you mean --min-count\?\)\n/],
    [['train', '--corpus'], /^scdv: option '--corpus <file>' argument missing\n/],
  ];
  for (const [args, re] of /** @type {[string[], RegExp][]} */ (cases)) {
    const r = scdv(args);
    assert.equal(r.code, 2, args.join(' '));
    assert.match(r.stderr, re, args.join(' '));
    assert.equal(r.stdout, '');
  }
});

test('scdv completion bash: a script that mentions every command and completes in bash', async () => {
  const r = scdv(['completion', 'bash']);
  assert.equal(r.code, 0, r.stderr);
  for (const { path: p } of await everyCommand()) assert.match(r.stdout, new RegExp(`\\b${p[p.length - 1]}\\b`), p.join(' '));
  const script = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-completion-')), 'scdv.bash');
  try {
    fs.writeFileSync(script, r.stdout);
    /** What bash offers for the words typed so far (the last one being completed). */
    const complete = (/** @type {string[]} */ words) => {
      const b = spawnSync('bash', ['-c', `source "${script}"; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _scdv; printf '%s\\n' "\${COMPREPLY[@]}"`], { encoding: 'utf8' });
      assert.equal(b.status, 0, b.stderr);
      return b.stdout.trim().split('\n').filter(Boolean);
    };
    assert.deepEqual(complete(['scdv', 'tr']), ['train']);
    assert.deepEqual(complete(['scdv', 'index', '--bat']), ['--batch-size']);
    assert.deepEqual(complete(['scdv', 'inspect', 'cl']), ['clusters']);
    assert.deepEqual(complete(['scdv', 'inspect', 'clusters', '--so']), ['--sort']);
    assert.deepEqual(complete(['scdv', 'train', '--covariance', '']), ['tied', 'diag', 'full']);
    assert.deepEqual(complete(['scdv', 'worker', 'i']), ['index']);
    assert.deepEqual(complete(['scdv', 'train', '--corpus', '']), [], 'a file name: the shell completes it (complete -o default)');
  } finally {
    fs.rmSync(path.dirname(script), { recursive: true, force: true });
  }
  const zsh = scdv(['completion', 'zsh']);
  assert.equal(zsh.code, 0);
  assert.match(zsh.stdout, /bashcompinit/);
  const fish = scdv(['completion', 'fish']);
  assert.equal(fish.code, 2);
  assert.equal(fish.stderr, 'scdv: scdv completion supports bash and zsh, got "fish"\n');
});
