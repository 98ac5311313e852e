// The layer map of docs/architecture.md and the edges between source files, for tests/architecture.test.js.
// An edge is a JS import (static, dynamic, JSDoc type, require), a JS run of a module of the Python package
// (runPython / runPythonModule('scdv.<module>'), or an argument list with '-m', 'scdv.<module>'), an import between
// the package's modules, or a Python module naming a JS file (REPO_ROOT / "pipeline" / "cli.js": it runs that file).
// Layers, top to bottom:
//   client    workers/scdv/vectorizer.py   (SCDVVectorizer: runs the `scdv` command as a user does)
//   cli       pipeline/scdv.cjs, pipeline/cli.js, pipeline/commands/
//   app       server/, pipeline/stages/, workers/*.js   (three peers that never import each other)
//   library   pipeline/<folder>/, pipeline/*.js, workers/scdv/*.py (the Python package: trainers, analysis, eval)
//   base      pipeline/config.js and pipeline/config/ (the schema), pipeline/errors.js, pipeline/paths.js
import path from 'node:path';

export const BASE_FILES = new Set(['pipeline/config.js', 'pipeline/errors.js', 'pipeline/paths.js']);
export const RANK = { base: 0, library: 1, app: 2, cli: 3, client: 4 };
/** The Python package's folder (on PYTHONPATH as `scdv`). */
export const PYTHON_PACKAGE = 'workers/scdv';
/** Its modules above the CLI: they run `scdv` commands, so nothing of the product may run or import them. */
const PYTHON_CLIENTS = new Set([`${PYTHON_PACKAGE}/vectorizer.py`]);
/** The one runner of Python modules: its calls pass the module its callers named, so they are not edges. */
export const PYTHON_RUNNER = 'pipeline/python.js';

/**
 * @param {string} file repository-relative
 * @returns {{ layer: keyof typeof RANK, group: string }}
 */
export function classify(file) {
  if (BASE_FILES.has(file) || file.startsWith('pipeline/config/')) return { layer: 'base', group: 'base' };
  if (PYTHON_CLIENTS.has(file)) return { layer: 'client', group: 'python clients' };
  if (file.startsWith(`${PYTHON_PACKAGE}/`)) return { layer: 'library', group: PYTHON_PACKAGE };
  if (file === 'pipeline/cli.js' || file === 'pipeline/scdv.cjs' || file.startsWith('pipeline/commands/')) return { layer: 'cli', group: 'cli' };
  if (file.startsWith('server/')) return { layer: 'app', group: 'server' };
  if (file.startsWith('workers/')) return { layer: 'app', group: 'workers' };
  if (file.startsWith('pipeline/stages/')) return { layer: 'app', group: 'stages' };
  const parts = file.split('/');
  return { layer: 'library', group: parts.length > 2 ? `pipeline/${parts[1]}` : 'pipeline/*.js' };
}

const IMPORT_RE = /(?:^|[\s;])(?:import|export)\s[^'"`;]*?from\s*['"](\.{1,2}\/[^'"]+)['"]|(?:import|require)\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)|^\s*import\s*['"](\.{1,2}\/[^'"]+)['"]/gm;

/**
 * Relative imports of a JS source text (static, dynamic and JSDoc type imports).
 * @param {string} text
 * @returns {string[]}
 */
export function importSpecifiers(text) {
  return [...text.matchAll(IMPORT_RE)].map((m) => m[1] ?? m[2] ?? m[3]);
}

// A call of the runner (not its definition) and its first argument; or '-m' followed by an argument.
const PYTHON_RUN_RE = /(?<!function\s+)\brunPython(?:Module)?\s*\(\s*([^,)]*)|['"]-m['"]\s*,\s*([^,\]]*)/g;
const SCDV_MODULE_RE = /^(['"`])(scdv(?:\.\w+)+)\1$/;

/**
 * The Python modules a JS source text runs, and the runs whose module is not a string literal (an edge the
 * checker cannot see, so a failure). '-m' with another literal (`python -m venv`, `-m pip`) is not ours.
 * @param {string} text
 * @returns {{ modules: string[], hidden: string[] }} hidden: "line N: <the argument>"
 */
export function pythonRuns(text) {
  /** @type {string[]} */
  const modules = [];
  /** @type {string[]} */
  const hidden = [];
  for (const m of text.matchAll(PYTHON_RUN_RE)) {
    const arg = (m[1] ?? m[2]).trim();
    const literal = SCDV_MODULE_RE.exec(arg);
    if (literal) modules.push(literal[2]);
    else if (m[1] !== undefined || !/^(['"`])[^'"`]*\1$/.test(arg)) {
      hidden.push(`line ${text.slice(0, m.index).split('\n').length}: ${arg || '(no argument)'}`);
    }
  }
  return { modules, hidden };
}

/**
 * The package modules a module of the Python package imports: `from .x import`, `from . import x, y`,
 * `from scdv.x import`, `import scdv.x`.
 * @param {string} text
 * @returns {string[]} module names without the package (x, y)
 */
export function pythonImports(text) {
  /** @type {string[]} */
  const names = [];
  const re = /^[ \t]*from[ \t]+(?:\.|scdv\.)(\w+)[ \t]+import\b|^[ \t]*from[ \t]+(?:\.|scdv)[ \t]+import[ \t]+(?:\(([\w\s,]+)\)|([\w \t,]+))|^[ \t]*import[ \t]+scdv\.(\w+)/gm;
  for (const m of text.matchAll(re)) {
    const list = m[2] ?? m[3];
    // `a as b`: the module is a
    if (list !== undefined) names.push(...list.split(',').map((s) => s.trim().split(/\s+/)[0]).filter(Boolean));
    else names.push(m[1] ?? m[4]);
  }
  return names;
}

/**
 * The repository's JS files a Python text names as path segments ("pipeline" / "cli.js", or "pipeline/cli.js").
 * @param {string} text
 * @returns {string[]} repository-relative paths
 */
export function pythonJsFiles(text) {
  return [...text.matchAll(/((?:["'][\w./-]+["']\s*\/\s*)*)["']([\w./-]+\.c?js)["']/g)]
    .map((m) => [...m[1].matchAll(/["']([\w./-]+)["']/g)].map((s) => s[1]).concat(m[2]).join('/'));
}

/**
 * @typedef {object} Edge
 * @property {string} from
 * @property {string} to
 * @property {'import' | 'python'} via
 */

/**
 * Every edge between the given files, and what the checker refuses to guess: runs of a Python module that is not a
 * literal or not in the package, and JS files a Python module names that are not among the files.
 * @param {Map<string, string>} files repository-relative path -> text (.js, .cjs, .py)
 * @param {string[]} roots the source roots edges may point into
 * @returns {{ edges: Edge[], problems: string[] }}
 */
export function sourceEdges(files, roots) {
  /** @type {Edge[]} */
  const edges = [];
  /** @type {string[]} */
  const problems = [];
  /** @param {string} name e.g. scdv.eval_baselines */
  const moduleFile = (name) => {
    const rel = name.split('.').slice(1).join('/');
    return [`${PYTHON_PACKAGE}/${rel}.py`, `${PYTHON_PACKAGE}/${rel}/__main__.py`].find((f) => files.has(f));
  };
  for (const [from, text] of files) {
    if (from.endsWith('.py')) {
      if (!from.startsWith(`${PYTHON_PACKAGE}/`)) continue;
      for (const name of pythonImports(text)) {
        const to = moduleFile(`scdv.${name}`);
        if (to) edges.push({ from, to, via: 'python' });
      }
      for (const to of pythonJsFiles(text)) {
        if (files.has(to)) edges.push({ from, to, via: 'python' });
        else problems.push(`${from} names ${to}, which is not a source file (write its path from the repository root)`);
      }
      continue;
    }
    for (const spec of importSpecifiers(text)) {
      const to = path.posix.normalize(path.posix.join(path.posix.dirname(from), spec));
      if (roots.some((d) => to.startsWith(`${d}/`))) edges.push({ from, to, via: 'import' });
    }
    const runs = pythonRuns(text);
    for (const name of runs.modules) {
      const to = moduleFile(name);
      if (to) edges.push({ from, to, via: 'python' });
      else problems.push(`${from} runs ${name}, which is not a module of ${PYTHON_PACKAGE}`);
    }
    if (from !== PYTHON_RUNNER) {
      for (const h of runs.hidden) problems.push(`${from} ${h}: runs a Python module that is not a string literal 'scdv.<module>'`);
    }
  }
  return { edges, problems };
}

/**
 * @param {Edge[]} edges
 * @returns {string[]} the edges that point to a higher layer
 */
export function upwardEdges(edges) {
  return edges.filter((e) => RANK[classify(e.to).layer] > RANK[classify(e.from).layer])
    .map((e) => `${e.from} (${classify(e.from).layer}) -> ${e.to} (${classify(e.to).layer})${e.via === 'python' ? ' [python]' : ''}`);
}
