// Arms: which method answers a request. The split is deterministic: a hash of the experiment's salt and the
// request's unit (a hashed user id, else the page id) picks a point in [0, 1), and the arms' weights divide that
// interval in config order; the same reader keeps the same arm for as long as the salt and the arms stay.
//
// Methods work on a collection's stored vectors without re-indexing. A hybrid vector is
// α·(SCDV block) ⊕ (1 − α)·(TF-IDF block), so a query holding only its SCDV block, divided by α, scores every
// document by the SCDV cosine alone ('scdv'); only its TF-IDF block, divided by 1 − α, by the lexical cosine
// ('lexical'). 'hybrid' is the query as embedded. The scores stay cosines of the method, comparable across bands.
import crypto from 'node:crypto';

/** @typedef {import('../config.js').Config['experiments']} Experiments */
/** @typedef {Experiments['arms'][number]} Arm */
/** @typedef {{indices: ArrayLike<number>, values: ArrayLike<number>}} SparseVector */

/**
 * A uniform point in [0, 1) from the salt and the unit.
 * @param {string} salt
 * @param {string} unit
 */
export function splitPoint(salt, unit) {
  const h = crypto.createHash('sha256').update(salt).update('\0').update(unit).digest();
  return h.readUIntBE(0, 6) / 2 ** 48;
}

/**
 * Whether a collection with this layout can answer with the method.
 * @param {Arm['method']} method
 * @param {import('../embed/layout.js').VectorLayout} layout
 */
export function methodAvailable(method, layout) {
  if (method === 'hybrid') return true;
  if (method === 'scdv') return true; // on a pure SCDV collection it is the collection's own vectors
  return layout.kind === 'hybrid' && layout.embed.hybrid.alpha < 1;
}

/**
 * The arm of a unit among the arms the layout can serve (an arm whose method the collection cannot answer with
 * is left out of its split; when none can, the first arm's name is kept and the collection's own vectors answer).
 * @param {Experiments} experiments
 * @param {string} unit
 * @param {import('../embed/layout.js').VectorLayout} layout
 * @returns {Arm}
 */
export function chooseArm(experiments, unit, layout) {
  const arms = experiments.arms.filter((a) => methodAvailable(a.method, layout));
  if (arms.length === 0) return { ...experiments.arms[0], method: 'hybrid' };
  if (arms.length === 1) return arms[0];
  const total = arms.reduce((n, a) => n + a.weight, 0);
  let at = splitPoint(experiments.salt, unit) * total;
  for (const a of arms) {
    if (at < a.weight) return a;
    at -= a.weight;
  }
  return arms[arms.length - 1];
}

/**
 * The query vector an arm's method searches with (the same object for 'hybrid' or a pure SCDV layout).
 * @param {Arm['method']} method
 * @param {SparseVector} vector the query as embedded (or as stored)
 * @param {import('../embed/layout.js').VectorLayout} layout
 * @returns {SparseVector}
 */
export function methodQuery(method, vector, layout) {
  if (method === 'hybrid' || layout.kind !== 'hybrid') return vector;
  const alpha = layout.embed.hybrid.alpha;
  const lexical = method === 'lexical';
  const scale = lexical ? 1 / (1 - alpha) : alpha > 0 ? 1 / alpha : 0;
  /** @type {number[]} */ const indices = [];
  /** @type {number[]} */ const values = [];
  for (let i = 0; i < vector.indices.length; i++) {
    if ((vector.indices[i] >= layout.scdvWidth) === lexical) {
      indices.push(vector.indices[i]);
      values.push(vector.values[i] * scale);
    }
  }
  return { indices: Uint32Array.from(indices), values: Float32Array.from(values) };
}

/** Random bytes for request ids, drawn 4 KiB at a time: one randomBytes(16) per request cost ~7 µs of the loop. */
let idBytes = Buffer.alloc(0);
let idAt = 0;

/**
 * A request id: 128 random bits (from the system's CSPRNG), URL-safe (what an impression event names the answer by).
 */
export function newRequestId() {
  if (idAt + 16 > idBytes.length) {
    idBytes = crypto.randomBytes(4096);
    idAt = 0;
  }
  const id = idBytes.toString('base64url', idAt, idAt + 16);
  idAt += 16;
  return id;
}
