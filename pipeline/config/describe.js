// A key's rule in words, generated from its schema ("a whole number from 1 to 1000, or null"): the error
// messages and docs/configuration.md both say it this way. Also the range helpers of the CLI's number flags.

/** @typedef {import('./schema/section.js').KeySchema} KeySchema */

/**
 * @typedef {object} Range
 * @property {number} min
 * @property {number} [max]
 * @property {boolean} [integer]
 * @property {boolean} [exclusiveMin] min itself is not allowed
 * @property {boolean} [nullable]
 */

/**
 * What a value must be, e.g. "a whole number from 1 to 1000".
 * @param {Range} r
 */
export function describeRange(r) {
  const kind = r.integer ? 'a whole number' : 'a number';
  const text = r.max === undefined
    ? (r.exclusiveMin ? `${kind} above ${r.min}` : `${kind} of at least ${r.min}`)
    : (r.exclusiveMin ? `${kind} above ${r.min} and at most ${r.max}` : `${kind} from ${r.min} to ${r.max}`);
  return r.nullable ? `${text}, or null` : text;
}

/**
 * Whether `v` is in the range (null only when the range allows it).
 * @param {unknown} v
 * @param {Range} r
 */
export function inRange(v, r) {
  if (v === null) return Boolean(r.nullable);
  if (typeof v !== 'number' || !Number.isFinite(v)) return false;
  if (r.integer && !Number.isInteger(v)) return false;
  if (r.exclusiveMin ? v <= r.min : v < r.min) return false;
  return r.max === undefined || v <= r.max;
}

/** @param {KeySchema} s @returns {string[]} */
export const typesOf = (s) => (Array.isArray(s.type) ? s.type : s.type === undefined ? [] : [s.type]);

/**
 * A numeric schema's range (undefined when it has no bound).
 * @param {KeySchema} s
 * @returns {Range | undefined}
 */
export function rangeOf(s) {
  const types = typesOf(s);
  if (!types.includes('integer') && !types.includes('number')) return undefined;
  const min = s.exclusiveMinimum ?? s.minimum;
  if (min === undefined) return undefined;
  return {
    min, ...(s.maximum !== undefined ? { max: s.maximum } : {}), ...(types.includes('integer') ? { integer: true } : {}),
    ...(s.exclusiveMinimum !== undefined ? { exclusiveMin: true } : {}), ...(types.includes('null') ? { nullable: true } : {}),
  };
}

/** @param {unknown[]} choices */
const choiceWords = (choices) => (choices.length === 2 ? `${choices[0]} or ${choices[1]}` : `one of ${choices.join(', ')}`);

/**
 * The rule of a key, without its null: "a positive integer", "one of tied, diag, full", "a list of at least 1
 * item, each a URL such as …".
 * @param {KeySchema} s
 * @returns {string}
 */
function ruleOf(s) {
  if (s.ruleText) return s.ruleText;
  if (s.enum) return choiceWords(s.enum.filter((/** @type {unknown} */ c) => c !== null));
  const types = typesOf(s).filter((t) => t !== 'null');
  const t = types[0];
  if (t === 'integer' || t === 'number') {
    const r = rangeOf(s);
    if (!r) return s.maximum !== undefined ? `${t === 'integer' ? 'a whole number' : 'a number'} of at most ${s.maximum}` : t === 'integer' ? 'a whole number' : 'a finite number';
    if (r.integer && r.min === 1 && !r.exclusiveMin && r.max === undefined) return 'a positive integer';
    return describeRange({ ...r, nullable: false });
  }
  if (t === 'boolean') return 'a boolean';
  if (t === 'string') return s.minLength ? 'a non-empty string' : 'a string';
  if (t === 'object') return s.properties ? `an object {${Object.keys(s.properties).join(', ')}}` : 'an object';
  if (t === 'array') {
    const lo = s.minItems ?? 0;
    const hi = s.maxItems;
    const count = hi !== undefined ? (lo ? ` of ${lo} to ${hi} items` : ` of at most ${hi} items`) : lo ? ` of at least ${lo} item${lo > 1 ? 's' : ''}` : '';
    return `a list${count}${s.items ? `, each ${ruleOf(s.items)}` : ''}`;
  }
  if (t === undefined && typesOf(s).includes('null')) return 'null';
  return `a ${t}`;
}

/**
 * A key's whole rule: its rule, ", or null" when null is allowed, and its note, e.g.
 * "a whole number from 0 to 64, or null (null: as many as embedThreads)".
 * @param {KeySchema} s
 */
export function describeRule(s) {
  const nullable = typesOf(s).includes('null') && typesOf(s).length > 1;
  return `${ruleOf(s)}${nullable ? ', or null' : ''}${s.note ? ` (${s.note})` : ''}`;
}
