// The codebase's shape, checked: dependencies point one way, the store's files are its own, files stay readable.
// The layers (docs/architecture.md) and what counts as an edge, JS imports and runs of the Python package's modules
// alike: tests/lib/layers.js. A file depends only on its own layer or lower ones, library folders form no cycle, the
// CLI reaches the server only through its entry point, and every run of a Python module names it as a literal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../pipeline/paths.js';
import { classify, importSpecifiers, pythonImports, pythonRuns, sourceEdges, upwardEdges } from './lib/layers.js';

const SOURCE_ROOTS = ['pipeline', 'server', 'workers'];
const MAX_LINES = 600;
/** The only server module the CLI may import: it starts the server; everything else is the server's own. */
const SERVER_ENTRY = 'server/start.js';

/**
 * @param {string} dir repository-relative
 * @param {(name: string) => boolean} keep
 * @returns {string[]} repository-relative paths
 */
function walk(dir, keep) {
  const abs = path.join(REPO_ROOT, dir);
  if (!fs.existsSync(abs)) return [];
  return fs.readdirSync(abs, { withFileTypes: true }).flatMap((e) => {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) return ['node_modules', 'build', '__pycache__', 'tests'].includes(e.name) ? [] : walk(rel, keep);
    return keep(e.name) ? [rel] : [];
  });
}

const jsFiles = SOURCE_ROOTS.flatMap((d) => walk(d, (n) => n.endsWith('.js') || n.endsWith('.cjs')));
const pyFiles = walk('workers', (n) => n.endsWith('.py'));
const { edges, problems } = sourceEdges(new Map([...jsFiles, ...pyFiles].map((f) => [f, fs.readFileSync(path.join(REPO_ROOT, f), 'utf8')])), SOURCE_ROOTS);

test('the import scanner sees static, dynamic, JSDoc type imports and require', () => {
  const text = "import a from './a.js';\nexport { b } from '../b.js';\n/** @type {import('./c.js').C} */\nconst d = await import('./d.js');\nimport './e.js';\nimport fs from 'node:fs';\nconst f = require('./f.cjs');";
  assert.deepEqual(importSpecifiers(text), ['./a.js', '../b.js', './c.js', './d.js', './e.js', './f.cjs']);
  assert.ok(edges.filter((e) => e.via === 'import').length > 100, `only ${edges.length} imports found: the scanner is broken`);
});

test('the Python scanner sees runs of a module (literal or not) and the package\'s own imports', () => {
  const js = "await runPythonModule('scdv.lexicon', args);\nexport function runPython(module, args) {}\nrunPython(name, []);\n" +
    "spawn(python, ['-m', 'scdv.train']);\nrun('python3', ['-m', 'venv']);\nrunPythonModule(`scdv.${stage}`, []);";
  assert.deepEqual(pythonRuns(js), { modules: ['scdv.lexicon', 'scdv.train'], hidden: ['line 3: name', 'line 6: `scdv.${stage}`'] });
  const py = 'from . import model_io\nfrom .errors import InputError\nfrom scdv import (gmm,\n  topics as t)\nimport scdv.idf\nimport numpy as np';
  assert.deepEqual(pythonImports(py), ['model_io', 'errors', 'gmm', 'topics', 'idf']);
  // The edges of the tree as it is: the library's runs (scdv eval, the analysis, the lexicon) and the training worker's.
  const runs = edges.filter((e) => e.via === 'python' && !e.from.endsWith('.py')).map((e) => `${e.from} -> ${e.to}`);
  for (const e of ['pipeline/model/lexicon.js -> workers/scdv/lexicon.py', 'pipeline/inspect/run-analysis.js -> workers/scdv/analysis.py', 'workers/train.js -> workers/scdv/train.py']) {
    assert.ok(runs.includes(e), `${e} not seen among ${runs.join(', ')}`);
  }
});

test('every run of a Python module names a module of the package as a literal', () => {
  assert.deepEqual(problems, []);
});

test('dependencies point down: no file imports or runs a higher layer', () => {
  assert.deepEqual(upwardEdges(edges), []);
});

test('the checker catches an upward edge, a hidden run and a missing module (synthetic files)', () => {
  const files = new Map([
    ['pipeline/eval/ok.js', "await runPythonModule('scdv.eval_baselines', []);"],
    ['pipeline/paths.js', "runPythonModule('scdv.analysis', []);"],
    ['pipeline/inspect/hide.js', 'const m = `scdv.${name}`;\nawait runPythonModule(m, []);'],
    ['pipeline/model/gone.js', "await runPythonModule('scdv.nowhere', []);"],
    ['pipeline/python.js', "export function runPythonModule(module, args) { return runPython(module, args); }\nspawn(py, ['-m', module]);"],
    ['workers/scdv/eval_baselines.py', 'from .errors import InputError'],
    ['workers/scdv/errors.py', ''],
    ['workers/scdv/analysis.py', 'from .vectorizer import SCDVVectorizer\nCLI = REPO_ROOT / "pipeline" / "commands" / "train.js"'],
    ['workers/scdv/vectorizer.py', 'subprocess.run([node, str(REPO_ROOT / "pipeline" / "cli.js")])'],
    ['pipeline/commands/train.js', ''],
    ['pipeline/cli.js', ''],
  ]);
  const got = sourceEdges(files, SOURCE_ROOTS);
  assert.deepEqual(upwardEdges(got.edges), [
    'pipeline/paths.js (base) -> workers/scdv/analysis.py (library) [python]',
    'workers/scdv/analysis.py (library) -> workers/scdv/vectorizer.py (client) [python]',
    'workers/scdv/analysis.py (library) -> pipeline/commands/train.js (cli) [python]',
  ]);
  assert.deepEqual(got.problems, [
    "pipeline/inspect/hide.js line 2: m: runs a Python module that is not a string literal 'scdv.<module>'",
    'pipeline/model/gone.js runs scdv.nowhere, which is not a module of workers/scdv',
  ]);
  // The library runs the package (same layer), the package's client runs the CLI (a layer down): both allowed.
  assert.ok(got.edges.some((e) => e.from === 'pipeline/eval/ok.js' && e.to === 'workers/scdv/eval_baselines.py'));
  assert.ok(got.edges.some((e) => e.from === 'workers/scdv/vectorizer.py' && e.to === 'pipeline/cli.js'));
});

test('server, stage coordinators and queue processors never import each other', () => {
  const across = edges.filter((e) => {
    const a = classify(e.from); const b = classify(e.to);
    return a.layer === 'app' && b.layer === 'app' && a.group !== b.group;
  }).map((e) => `${e.from} -> ${e.to}`);
  assert.deepEqual(across, []);
});

test('the CLI starts the server but borrows none of its internals', () => {
  const borrowed = edges.filter((e) => classify(e.from).layer === 'cli' && e.to.startsWith('server/') && e.to !== SERVER_ENTRY)
    .map((e) => `${e.from} -> ${e.to}`);
  assert.deepEqual(borrowed, []);
});

test('library folders form no cycle', () => {
  /** @type {Map<string, Set<string>>} */
  const graph = new Map();
  for (const e of edges) {
    const a = classify(e.from); const b = classify(e.to);
    if (a.layer !== 'library' || b.layer !== 'library' || a.group === b.group) continue;
    if (!graph.has(a.group)) graph.set(a.group, new Set());
    /** @type {Set<string>} */ (graph.get(a.group)).add(b.group);
  }
  /** @type {string[]} */
  const cycles = [];
  /** @type {Map<string, number>} 1 = on the current path, 2 = done */
  const state = new Map();
  /** @param {string} node @param {string[]} trail */
  const visit = (node, trail) => {
    if (state.get(node) === 2) return;
    if (state.get(node) === 1) { cycles.push([...trail.slice(trail.indexOf(node)), node].join(' -> ')); return; }
    state.set(node, 1);
    for (const next of graph.get(node) ?? []) visit(next, [...trail, node]);
    state.set(node, 2);
  };
  for (const node of graph.keys()) visit(node, []);
  assert.deepEqual(cycles, []);
});

test("the store's files are its own: no code outside pipeline/store names them", () => {
  const STORE_FILES = /['"`/](collection\.json|CURRENT|MERGE\.lock|wal-\d|\.seg)['"`]/;
  const offenders = jsFiles.filter((f) => !f.startsWith('pipeline/store/'))
    .filter((f) => STORE_FILES.test(fs.readFileSync(path.join(REPO_ROOT, f), 'utf8')));
  assert.deepEqual(offenders, []);
});

test(`no source file is over ${MAX_LINES} lines`, () => {
  const sources = SOURCE_ROOTS.flatMap((d) => walk(d, (n) => /\.(js|py|cc|h)$/.test(n)));
  assert.ok(sources.length > 50, 'source files not found');
  const long = sources.map((f) => ({ f, n: fs.readFileSync(path.join(REPO_ROOT, f), 'utf8').split('\n').length - 1 }))
    .filter(({ n }) => n > MAX_LINES).map(({ f, n }) => `${f}: ${n} lines`);
  assert.deepEqual(long, []);
});
