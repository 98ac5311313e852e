// The codebase's shape, checked: dependencies point one way, the store's files are its own, files stay readable.
// Layers, top to bottom (docs/architecture.md):
//   cli       pipeline/scdv.cjs, pipeline/cli.js, pipeline/commands/
//   app       server/, pipeline/stages/, workers/   (three peers that never import each other)
//   library   pipeline/<tokenizer|corpus|model|embed|store|queue|eval|inspect|report|setup>/, pipeline/*.js
//   base      pipeline/config.js and pipeline/config/ (the schema), pipeline/errors.js, pipeline/paths.js
// A file imports only its own layer or lower ones (type imports in JSDoc included), library folders form no cycle,
// and the CLI reaches the server only through its entry point.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../pipeline/paths.js';

const SOURCE_ROOTS = ['pipeline', 'server', 'workers'];
const MAX_LINES = 600;
const BASE_FILES = new Set(['pipeline/config.js', 'pipeline/errors.js', 'pipeline/paths.js']);
const RANK = { base: 0, library: 1, app: 2, cli: 3 };
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

/**
 * @param {string} file repository-relative
 * @returns {{ layer: keyof typeof RANK, group: string }}
 */
export function classify(file) {
  if (BASE_FILES.has(file) || file.startsWith('pipeline/config/')) return { layer: 'base', group: 'base' };
  if (file === 'pipeline/cli.js' || file === 'pipeline/scdv.cjs' || file.startsWith('pipeline/commands/')) return { layer: 'cli', group: 'cli' };
  if (file.startsWith('server/')) return { layer: 'app', group: 'server' };
  if (file.startsWith('workers/')) return { layer: 'app', group: 'workers' };
  if (file.startsWith('pipeline/stages/')) return { layer: 'app', group: 'stages' };
  const parts = file.split('/');
  return { layer: 'library', group: parts.length > 2 ? `pipeline/${parts[1]}` : 'pipeline/*.js' };
}

const IMPORT_RE = /(?:^|[\s;])(?:import|export)\s[^'"`;]*?from\s*['"](\.{1,2}\/[^'"]+)['"]|(?:import|require)\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)|^\s*import\s*['"](\.{1,2}\/[^'"]+)['"]/gm;

/**
 * Relative imports of a source text (static, dynamic and JSDoc type imports).
 * @param {string} text
 * @returns {string[]}
 */
export function importSpecifiers(text) {
  return [...text.matchAll(IMPORT_RE)].map((m) => m[1] ?? m[2] ?? m[3]);
}

const jsFiles = SOURCE_ROOTS.flatMap((d) => walk(d, (n) => n.endsWith('.js') || n.endsWith('.cjs')));
/** @type {{ from: string, to: string }[]} */
const edges = jsFiles.flatMap((from) => importSpecifiers(fs.readFileSync(path.join(REPO_ROOT, from), 'utf8'))
  .map((spec) => ({ from, to: path.relative(REPO_ROOT, path.resolve(REPO_ROOT, path.dirname(from), spec)) }))
  .filter((e) => SOURCE_ROOTS.some((d) => e.to.startsWith(`${d}/`))));

test('the import scanner sees static, dynamic, JSDoc type imports and require', () => {
  const text = "import a from './a.js';\nexport { b } from '../b.js';\n/** @type {import('./c.js').C} */\nconst d = await import('./d.js');\nimport './e.js';\nimport fs from 'node:fs';\nconst f = require('./f.cjs');";
  assert.deepEqual(importSpecifiers(text), ['./a.js', '../b.js', './c.js', './d.js', './e.js', './f.cjs']);
  assert.ok(edges.length > 100, `only ${edges.length} imports found: the scanner is broken`);
});

test('dependencies point down: no file imports a higher layer', () => {
  const upward = edges.filter((e) => RANK[classify(e.to).layer] > RANK[classify(e.from).layer])
    .map((e) => `${e.from} (${classify(e.from).layer}) -> ${e.to} (${classify(e.to).layer})`);
  assert.deepEqual(upward, []);
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
