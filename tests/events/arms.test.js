// Arms without a server: the split follows the weights and is sticky, an arm the layout cannot serve is left out,
// the methods' query blocks, and experiments/events config errors that name the key.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chooseArm, methodQuery, newRequestId, splitPoint } from '../../pipeline/events/arms.js';
import { loadConfig } from '../../pipeline/config.js';
import { vectorLayout } from '../../pipeline/embed/layout.js';

const base = loadConfig();
const hybrid = vectorLayout({ ...base.embed, hybrid: { ...base.embed.hybrid, alpha: 0.25 } }, 10, 5);
const pure = vectorLayout({ ...base.embed, hybrid: { ...base.embed.hybrid, alpha: 1 } }, 10, 5);
const arms = /** @type {const} */ ([{ name: 'a', method: 'hybrid', weight: 1 }, { name: 'b', method: 'lexical', weight: 3 }]);

test('the split follows the weights, is the same for the same unit, and changes with the salt', () => {
  const x = { salt: 's1', arms: [...arms] };
  const counts = { a: 0, b: 0 };
  for (let i = 0; i < 4000; i++) counts[/** @type {'a'|'b'} */ (chooseArm(x, `u${i}`, hybrid).name)]++;
  assert.ok(Math.abs(counts.b / 4000 - 0.75) < 0.03, JSON.stringify(counts));
  assert.equal(chooseArm(x, 'u1', hybrid).name, chooseArm(x, 'u1', hybrid).name);
  assert.notEqual(splitPoint('s1', 'u1'), splitPoint('s2', 'u1'));
  // On a pure SCDV collection the lexical arm cannot answer: every unit goes to a.
  assert.ok(Array.from({ length: 50 }, (_, i) => chooseArm(x, `u${i}`, pure).name).every((n) => n === 'a'));
});

test('methods: the SCDV block over alpha, the lexical block over 1 - alpha, hybrid unchanged', () => {
  const v = { indices: Uint32Array.from([1, 4, 11, 13]), values: Float32Array.from([0.5, 0.25, 0.5, 0.25]) };
  assert.equal(methodQuery('hybrid', v, hybrid), v);
  const s = methodQuery('scdv', v, hybrid);
  assert.deepEqual(Array.from(s.indices), [1, 4]);
  assert.deepEqual(Array.from(s.values), [2, 1]);
  const l = methodQuery('lexical', v, hybrid);
  assert.deepEqual(Array.from(l.indices), [11, 13]);
  assert.deepEqual(Array.from(l.values).map((x) => Math.round(x * 1e6) / 1e6), [0.666667, 0.333333]);
  assert.equal(methodQuery('scdv', v, pure), v);
});

test('experiments and events settings are checked, naming the key', () => {
  const bad = (/** @type {any} */ o, /** @type {RegExp} */ re) => assert.throws(() => loadConfig({ overrides: o }), (e) => re.test(/** @type {Error} */ (e).message));
  bad({ experiments: { arms: [] } }, /experiments\.arms must be a list of 1 to 20 items, each an object \{name, method, weight\}, got \[\]/);
  bad({ experiments: { arms: [{ name: 'a', method: 'bm25', weight: 1 }] } }, /experiments\.arms\[0\]\.method must be one of hybrid, scdv, lexical/);
  bad({ experiments: { arms: [{ name: 'a', method: 'scdv', weight: 1 }, { name: 'a', method: 'hybrid', weight: 1 }] } }, /experiments\.arms\[1\]\.name "a" is used twice/);
  bad({ experiments: { arms: [{ name: 'a', method: 'scdv', weight: 0 }] } }, /experiments\.arms\[0\]\.weight must be a number above 0/);
  bad({ experiments: { arms: [{ name: 'a', method: 'scdv', weight: 1, share: 2 }] } }, /unknown key experiments\.arms\[0\]\.share/);
  bad({ events: { fsync: 'sometimes' } }, /events\.fsync must be always or never/);
  bad({ events: { bandWidth: 0 } }, /events\.bandWidth must be a number above 0 and at most 1, got 0/);
  bad({ events: { maxBatch: 0 } }, /events\.maxBatch must be a positive integer/);
  bad({ events: { retention: 1 } }, /unknown key events\.retention/);
});

test('request ids: 128 bits as 22 URL-safe characters, all distinct across refills of the random pool', () => {
  const seen = new Set();
  // 4 KiB of random bytes make 256 ids: this crosses several refills.
  for (let i = 0; i < 2000; i++) {
    const id = newRequestId();
    assert.match(id, /^[A-Za-z0-9_-]{22}$/);
    seen.add(id);
  }
  assert.equal(seen.size, 2000);
  // The bits look random: each of the 64 characters shows up, none far more often than the others.
  /** @type {Map<string, number>} */
  const counts = new Map();
  for (const id of seen) for (const ch of id.slice(0, 21)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  assert.equal(counts.size, 64);
  assert.ok(Math.max(...counts.values()) < 3 * (2000 * 21) / 64, JSON.stringify([...counts]));
});
