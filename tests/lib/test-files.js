// Which test files `npm test` runs, and which of them the quick loop (`npm run test:quick`) runs: the files that
// need no trained model, server, Redis or CLI run, told from what each file imports and starts, less a few heavy ones.
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../../pipeline/paths.js';

/**
 * Every *.test.js below `dir` (Node 20's test runner does not expand globs itself), relative to the repository.
 * @param {string} [dir]
 * @returns {string[]}
 */
export function testFiles(dir = path.join(REPO_ROOT, 'tests')) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    // tests/reliability and tests/opensearch run as their own steps (npm run test:reliability, about 5 minutes;
    // npm run test:opensearch, which needs OpenSearch installed).
    const ownStep = ['reliability', 'opensearch'].some((d) => p === path.join(REPO_ROOT, 'tests', d));
    if (e.isDirectory()) return e.name === 'fixtures' || ownStep ? [] : testFiles(p);
    return e.name.endsWith('.test.js') ? [path.relative(REPO_ROOT, p)] : [];
  }).sort();
}

/** Modules whose use makes a file an integration test: trained models, a server, the CLI, a browser. */
const FIXTURE_MODULES = [
  'tests/server/helpers.js', 'tests/lib/tiny-model.js', 'tests/lib/cli.js', 'tests/lib/browser.js',
  'server/start.js', 'pipeline/stages/train.js', 'pipeline/commands/demo.js',
];

/**
 * Files that need none of that but take 7 to 25 s of CPU each on a loaded machine (seeded search sweeps over many
 * segments, the API types generated and compiled, set-up scripts, Python processes): `npm test` runs them, the quick
 * loop does not.
 */
const HEAVY = [
  'tests/store/certified.test.js', 'tests/store/fast-prune.test.js', 'tests/store/posting-simd.test.js',
  'tests/store/search.test.js', 'tests/server/api-types.test.js', 'tests/setup/system-packages.test.js',
  'tests/stages/python-runner.test.js',
];

/** A Redis of its own, or a child process running the CLI or npm: an integration test too. */
const STARTS_REDIS = /\bstartPrivateRedis\(/;
const SPAWNS = /\b(?:spawn|spawnSync|execFile|execFileSync|fork)\(/;
const RUNS_CLI = /'pipeline', 'cli\.js'|pipeline\/cli\.js'|scdv\.cjs'|['"]npm['"]/;

/**
 * The repository paths a file imports (static and dynamic imports of relative paths).
 * @param {string} file relative to the repository
 * @param {string} src its text
 */
function imports(file, src) {
  const out = [];
  for (const m of src.matchAll(/(?:from\s+|import\(\s*)'(\.{1,2}\/[^']+)'/g)) {
    out.push(path.relative(REPO_ROOT, path.resolve(REPO_ROOT, path.dirname(file), m[1])));
  }
  return out;
}

/**
 * Whether a test file belongs to the quick loop: it imports none of the fixture modules and starts no Redis or CLI.
 * @param {string} file relative to the repository
 */
export function isQuick(file) {
  if (HEAVY.includes(file)) return false;
  const src = fs.readFileSync(path.join(REPO_ROOT, file), 'utf8');
  if (imports(file, src).some((p) => FIXTURE_MODULES.includes(p))) return false;
  return !STARTS_REDIS.test(src) && !(SPAWNS.test(src) && RUNS_CLI.test(src));
}
