// scdv simulate-readers: synthetic readers against a running server (tests, demos): views, impressions, clicks.
import fs from 'node:fs';
import { errors } from '../errors.js';
import { parseDocument } from '../corpus/document.js';
import { SAMPLE_CORPUS } from '../paths.js';
import { CLI_DEFAULTS } from '../config.js';
import { DEFAULT_READER, simulateReaders } from '../events/simulate.js';
import { intFlag } from './common.js';
import { opt } from './define.js';

/** @type {import('./define.js').CommandSpec} */
export const command = {
  description: 'Synthetic readers view pages of --corpus, ask the server for related articles, report impressions and clicks '
    + `through POST /v1/events. Click probability: ${DEFAULT_READER.relevantCtr} for an item of the page's category, `
    + `${DEFAULT_READER.otherCtr} otherwise, divided by 1 + ${DEFAULT_READER.positionDecay}·(position − 1), times a per-view noise factor and --arm-effect.`,
  options: [
    opt('--url <url>', 'the server', { default: 'http://127.0.0.1:8080' }),
    opt('--collection <name>', 'the collection the pages are in', { default: CLI_DEFAULTS.collection }),
    opt('--corpus <file>', 'the pages (JSON Lines with id and category; default: the bundled sample)'),
    opt('--views <n>', 'page views', { default: '1000' }),
    opt('--k <n>', 'items shown per view', { default: '5' }),
    opt('--seed <n>', 'random seed', { default: '1' }),
    opt('--key <key>', 'API key (when server.openReads is false); SCDV_API_KEY also works'),
    opt('--arm-effect <name=factor...>', 'multiply the click probability of an arm, e.g. scdv=0.8 (repeatable)'),
    opt('--json', 'the summary as JSON'),
  ],
  examples: ['scdv simulate-readers --views 2000 --arm-effect lexical=0.7 && scdv report clicks'],
  run,
};

/** @param {Record<string, any>} values */
async function run(values) {
  const file = values.corpus ?? SAMPLE_CORPUS;
  let text;
  try { text = fs.readFileSync(file, 'utf8'); } catch (err) { throw errors.CORPUS_NOT_FOUND(file, /** @type {Error} */ (err).message); }
  const pages = text.split('\n').flatMap((line, i) => {
    if (!line.trim()) return [];
    const r = parseDocument(Buffer.from(line), i + 1);
    return 'doc' in r ? [{ id: r.doc.id, category: r.doc.category, site: r.doc.site }] : [];
  });
  if (!pages.length) throw errors.CORPUS_UNUSABLE(file, 'no line with an id');
  /** @type {Record<string, number>} */
  const armEffect = {};
  for (const e of [values['arm-effect'] ?? []].flat()) {
    const m = /^([A-Za-z0-9._-]+)=(\d+(\.\d+)?)$/.exec(String(e));
    if (!m) throw errors.USAGE(`--arm-effect must be NAME=FACTOR (e.g. scdv=0.8), got "${e}"`);
    armEffect[m[1]] = Number(m[2]);
  }
  const summary = await simulateReaders({
    url: String(values.url).replace(/\/$/, ''), collection: values.collection, pages,
    views: /** @type {number} */ (intFlag(values.views, '--views', { min: 1, integer: true })),
    k: intFlag(values.k, '--k', { min: 1, max: 100, integer: true }),
    seed: intFlag(values.seed, '--seed'),
    key: values.key ?? process.env.SCDV_API_KEY, armEffect, log: (m) => process.stderr.write(`${m}\n`),
  });
  if (values.json) { process.stdout.write(`${JSON.stringify(summary)}\n`); return; }
  process.stdout.write(`${summary.views} views, ${summary.impressions} impressions, ${summary.clicks} clicks, ${summary.events} events sent\n`);
  for (const [arm, t] of Object.entries(summary.truth)) {
    process.stdout.write(`  arm ${arm}: ${t.shown} items shown, ${t.clicks} clicks, expected CTR ${(100 * t.expectedCtr).toFixed(2)}%\n`);
  }
}
