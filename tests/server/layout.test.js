// Requests are embedded with the settings a model's collections were indexed with (models/<name>/indexed.json).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const h = await import('./helpers.js');
const { recordIndexed, servingEmbedConfig } = await import('../../pipeline/serving/index.js');
const { vectorLayout } = await import('../../pipeline/embed/layout.js');
const { DEFAULT_CONFIG } = await import('../../pipeline/config.js');

after(() => h.teardown());

test('the server embeds with the recorded layout when every collection agrees, else with the config', async () => {
  const dir = path.join(/** @type {string} */ (process.env.SCDV_MODELS_DIR), 'layout-m');
  fs.mkdirSync(dir, { recursive: true });
  const configured = h.testConfig().embed;
  const logs = /** @type {string[]} */ ([]);
  const log = { info: (/** @type {any} */ _o, /** @type {string=} */ m) => logs.push(`info ${m}`), warn: (/** @type {any} */ _o, /** @type {string=} */ m) => logs.push(`warn ${m}`) };
  // Nothing recorded: the config's settings.
  assert.equal(await servingEmbedConfig('layout-m', { embed: configured, store: DEFAULT_CONFIG.store }, log), configured);

  const indexedWith = { ...configured, keepCount: 50, hybrid: { ...configured.hybrid, alpha: 0.5 } };
  recordIndexed('layout-m', 'articles', vectorLayout(indexedWith, 144, 1000));
  recordIndexed('layout-m', 'ads', vectorLayout(indexedWith, 144, 1000));
  assert.deepEqual(await servingEmbedConfig('layout-m', { embed: configured, store: DEFAULT_CONFIG.store }, log), indexedWith);
  assert.match(logs.pop() ?? '', /^info .*indexed with/);

  // An ad collection's layout is its own (adEmbed): it does not count against the pages' default.
  const adLayout = vectorLayout({ ...indexedWith, keepCount: 20 }, 144, 1000);
  recordIndexed('layout-m', 'ads', adLayout);
  assert.deepEqual(await servingEmbedConfig('layout-m', { embed: configured, store: DEFAULT_CONFIG.store, adEmbed: DEFAULT_CONFIG.adEmbed }, log), indexedWith);
  // Two page collections of different layouts have no common default: the config's stays and a warning says so.
  recordIndexed('layout-m', 'news', adLayout);
  assert.equal(await servingEmbedConfig('layout-m', { embed: configured, store: DEFAULT_CONFIG.store, adEmbed: DEFAULT_CONFIG.adEmbed }, log), configured);
  assert.match(logs.pop() ?? '', /^warn .*different embed settings/);
});
