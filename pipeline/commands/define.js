// How a command declares its flags (a CommandSpec) and how that becomes a commander command: --help with every
// option, its default and an example; unknown options with a suggestion; values handed to the command's run.
import { Option } from 'commander';
import { DEFAULT_CONFIG } from '../config.js';

/**
 * @typedef {object} OptionSpec
 * @property {string} flags e.g. '--clusters <k>' (takes a value) or '--force' (a switch)
 * @property {string} help
 * @property {string} [config] the config key the option overrides (e.g. 'train.gmm.n_components'): help shows
 *   its built-in default from the config schema (pipeline/config/schema/)
 * @property {string} [nullValue] the flag's word for the config key's null (e.g. --clusters auto), shown as the
 *   default when the built-in value is null
 * @property {string} [default] the value when the option is not given (CLI_DEFAULTS, from pipeline/config/schema/cli.js)
 * @property {string[]} [choices] allowed values: shown in help and offered by completion (run checks them, with
 *   its own message)
 * @property {boolean} [hidden] not in help (e.g. --config-json, between processes)
 */

/** @typedef {(values: Record<string, any>, positionals: string[]) => Promise<void>} RunFn */
/** @typedef {[name: string, help: string, choices?: string[]]} ArgumentSpec '[name]': optional ('<name>' would let commander refuse a missing one, before run's own message) */

/**
 * @typedef {object} CommandSpec
 * @property {string} [description] more than the summary, for the command's own help
 * @property {ArgumentSpec[]} [arguments] operands in order, e.g. ['[stage]', 'the queue', ['tokenize', 'train', …]]
 * @property {OptionSpec[]} [options]
 * @property {string[]} examples at least one
 * @property {Record<string, SubcommandSpec>} [subcommands] e.g. inspect clusters | doc
 * @property {RunFn} [run] values keyed by the long flag without dashes ('batch-size'), operands in order
 */
/** @typedef {CommandSpec & {summary: string}} SubcommandSpec */

/**
 * @param {string} flags
 * @param {string} help
 * @param {Omit<OptionSpec, 'flags'|'help'>} [more]
 * @returns {OptionSpec}
 */
export const opt = (flags, help, more = {}) => ({ flags, help, ...more });

/** --config FILE, taken by most commands. */
export const CONFIG_OPTION = opt('--config <file>', 'JSON config file over the built-in defaults (README "Configuration")');

/**
 * The built-in value of a config key, e.g. 'train.gmm.n_components' -> 60.
 * @param {string} key
 */
export function configDefault(key) {
  /** @type {any} */
  let v = DEFAULT_CONFIG;
  for (const part of key.split('.')) {
    if (v == null || !(part in v)) throw new Error(`no config key ${key} (an option's spec names it)`);
    v = v[part];
  }
  return v;
}

/**
 * The built-in value of an option's config key as help shows it: JSON, or the flag's word for null.
 * @param {OptionSpec} o
 */
function shownDefault(o) {
  const v = configDefault(/** @type {string} */ (o.config));
  return v === null && o.nullValue ? o.nullValue : JSON.stringify(v);
}

/** @param {OptionSpec} o */
function toOption(o) {
  const notes = [
    ...(o.choices ? [`one of ${o.choices.join(', ')}`] : []),
    ...(o.config ? [`default: ${shownDefault(o)} from config ${o.config}`] : []),
  ];
  const help = notes.length ? `${o.help} (${notes.join('; ')})` : o.help;
  const option = new Option(o.flags, help);
  if (o.default !== undefined) option.default(o.default);
  if (o.hidden) option.hideHelp();
  return option;
}

/**
 * Adds a spec's arguments, options, examples, subcommands and action to a commander command.
 * @param {import('commander').Command} cmd
 * @param {CommandSpec} spec
 */
export function defineCommand(cmd, spec) {
  if (spec.description) cmd.description(spec.description);
  for (const [name, help, choices] of spec.arguments ?? []) cmd.argument(name, choices ? `${help} (one of ${choices.join(', ')})` : help);
  for (const o of spec.options ?? []) cmd.addOption(toOption(o));
  for (const [name, sub] of Object.entries(spec.subcommands ?? {})) defineCommand(cmd.command(name).summary(sub.summary), sub);
  cmd.addHelpText('after', `\nExample${spec.examples.length > 1 ? 's' : ''}:\n${spec.examples.map((e) => `  $ ${e}`).join('\n')}`);
  const run = spec.run;
  if (run) cmd.action(async (/** @type {any[]} */ ...args) => { const c = args[args.length - 1]; await run(flagValues(c), c.args); });
  return cmd;
}

/**
 * The parsed options keyed as the user spells them ('batch-size'; '--no-baselines' -> 'no-baselines': true).
 * @param {import('commander').Command} cmd
 */
function flagValues(cmd) {
  const opts = cmd.opts();
  /** @type {Record<string, any>} */
  const values = {};
  for (const o of cmd.options) {
    if (!o.long) continue;
    const v = opts[o.attributeName()];
    values[o.long.slice(2)] = o.negate ? v === false : (o.isBoolean() && v === undefined ? false : v);
  }
  return values;
}
