// The building block of the configuration schema (pipeline/config/schema.js): a section is a JSON Schema object
// of known keys only. Besides JSON Schema's own keywords, a key's schema may carry these annotations, which ajv
// is told about (pipeline/config/validate.js) and which the loader, the error messages, the environment
// variables, docs/configuration.md and the generated types read:
//   default      the built-in value (every leaf key has one)
//   description  one line: what the key does
//   why          one line: why the default is what it is, with where it was measured ("BENCHMARKS.md § …")
//   note         words added to the rule in messages and docs: a unit or what a special value means ("0: no limit")
//   ruleText     the rule in words where it cannot be generated from the schema (a string's pattern)
//   envAliases   older variable names that set the key as well as its derived SCDV_… name
//   envFormat    'json': the variable is read as a JSON array only (items that may contain commas)
//   secret       the value is a secret: never echoed in a message; docs say to set it by environment
//   hideValue    never echoed in a message (a secret's digest)
//   tsType       the type in the generated JSDoc when the JSON type does not say it (a callback)

/** The annotation keywords above: ajv validates nothing with them. */
export const ANNOTATIONS = ['why', 'note', 'ruleText', 'envAliases', 'envFormat', 'secret', 'hideValue', 'tsType'];

/**
 * @typedef {Record<string, any>} KeySchema a JSON Schema with the annotations above
 */

/**
 * An object of these keys and no others.
 * @param {string | undefined} description
 * @param {Record<string, KeySchema>} properties
 * @param {Record<string, unknown>} [more] further keywords (why, …)
 * @returns {KeySchema}
 */
export const section = (description, properties, more = {}) => ({
  type: 'object', ...(description ? { description } : {}), ...more, additionalProperties: false, properties,
});

/** The damping choices shared by embed.damping, embed.hybrid.damping and eval.classify.damping. */
export const DAMPING = ['binary', 'log', 'raw', 'saturate'];
