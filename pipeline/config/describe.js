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
 * @param {Range} range
 */
export function describeRange(range) {
  const kind = range.integer ? 'a whole number' : 'a number';
  const text = range.max === undefined
    ? (range.exclusiveMin ? `${kind} above ${range.min}` : `${kind} of at least ${range.min}`)
    : (range.exclusiveMin ? `${kind} above ${range.min} and at most ${range.max}` : `${kind} from ${range.min} to ${range.max}`);
  return range.nullable ? `${text}, or null` : text;
}

/**
 * Whether `v` is in the range (null only when the range allows it).
 * @param {unknown} value
 * @param {Range} range
 */
export function inRange(value, range) {
  if (value === null) return Boolean(range.nullable);
  if (typeof value !== 'number' || !Number.isFinite(value)) return false;
  if (range.integer && !Number.isInteger(value)) return false;
  if (range.exclusiveMin ? value <= range.min : value < range.min) return false;
  return range.max === undefined || value <= range.max;
}

/** @param {KeySchema} schema @returns {string[]} */
export const typesOf = (schema) => (Array.isArray(schema.type) ? schema.type : schema.type === undefined ? [] : [schema.type]);

/**
 * A numeric schema's range (undefined when it has no bound).
 * @param {KeySchema} schema
 * @returns {Range | undefined}
 */
export function rangeOf(schema) {
  const types = typesOf(schema);
  if (!types.includes('integer') && !types.includes('number')) return undefined;
  const min = schema.exclusiveMinimum ?? schema.minimum;
  if (min === undefined) return undefined;
  return {
    min, ...(schema.maximum !== undefined ? { max: schema.maximum } : {}), ...(types.includes('integer') ? { integer: true } : {}),
    ...(schema.exclusiveMinimum !== undefined ? { exclusiveMin: true } : {}), ...(types.includes('null') ? { nullable: true } : {}),
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
 * @param {KeySchema} schema
 */
export function describeRule(schema) {
  const nullable = typesOf(schema).includes('null') && typesOf(schema).length > 1;
  return `${ruleOf(schema)}${nullable ? ', or null' : ''}${schema.note ? ` (${schema.note})` : ''}`;
}
