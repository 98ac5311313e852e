// scdv completion bash|zsh: a completion script built from the commands' specs (registry.js), so a new command
// or option is offered without editing the script. Install: README "The scdv command".
import { errors } from '../errors.js';
import { COMMANDS } from './registry.js';

const SHELLS = ['bash', 'zsh'];

/** @type {import('./define.js').CommandSpec} */
export const command = {
  description: 'Print a shell completion script for commands, subcommands, options and worker stages; file names ' +
    'after options that take a value. Load it from your shell start-up file.',
  arguments: [['[shell]', 'the shell (default: bash)', SHELLS]],
  examples: [
    'scdv completion bash',
    'echo \'eval "$(scdv completion bash)"\' >> ~/.bashrc',
    'echo \'eval "$(scdv completion zsh)"\' >> ~/.zshrc',
  ],
  run,
};

/**
 * @param {Record<string, any>} _values
 * @param {string[]} positionals
 */
async function run(_values, positionals) {
  const shell = positionals[0] ?? 'bash';
  if (!SHELLS.includes(shell)) throw errors.USAGE(`scdv completion supports ${SHELLS.join(' and ')}, got "${shell}"`);
  process.stdout.write(await completionScript(shell));
}

/** @param {import('./define.js').CommandSpec} spec */
function words(spec) {
  const options = (spec.options ?? []).filter((o) => !o.hidden).map((o) => o.flags.split(' ')[0]);
  const choices = (spec.arguments ?? []).flatMap(([, , c]) => c ?? []);
  return [...Object.keys(spec.subcommands ?? {}), ...choices, ...options, '--help'];
}

/**
 * The script: a case per command (and per subcommand) listing its words; after an option that takes a value,
 * the value's choices if it has some, else the shell's file names.
 * @param {string} shell
 */
export async function completionScript(shell) {
  const cases = [];
  /** @type {Map<string, string[]>} */
  const valued = new Map(); // option -> its choices ([] for a free value: complete file names)
  for (const [name, entry] of Object.entries(COMMANDS)) {
    const spec = (await entry.load()).command;
    const subs = Object.entries(spec.subcommands ?? {});
    for (const o of [spec, ...subs.map(([, s]) => s)].flatMap((s) => s.options ?? [])) {
      if (o.flags.includes('<') && !o.hidden) valued.set(o.flags.split(' ')[0], [...(valued.get(o.flags.split(' ')[0]) ?? []), ...(o.choices ?? [])]);
    }
    const subCases = subs.map(([sub, s]) => `        ${sub}) words="${words(s).join(' ')}" ;;`);
    cases.push(subs.length
      ? `    ${name})\n      case "$sub" in\n${subCases.join('\n')}\n        *) words="${words(spec).join(' ')}" ;;\n      esac ;;`
      : `    ${name}) words="${words(spec).join(' ')}" ;;`);
  }
  const valueCases = [...valued].map(([flag, choices]) => `    ${flag}) ${choices.length ? `COMPREPLY=($(compgen -W "${[...new Set(choices)].join(' ')}" -- "$cur"))` : 'COMPREPLY=()'}; return ;;`);
  return `# scdv ${shell} completion (scdv completion ${shell}); load it with: eval "$(scdv completion ${shell})"
${shell === 'zsh' ? 'autoload -U +X bashcompinit && bashcompinit\n' : ''}_scdv() {
  local cur=\${COMP_WORDS[COMP_CWORD]} prev=\${COMP_WORDS[COMP_CWORD-1]} cmd=\${COMP_WORDS[1]} sub=\${COMP_WORDS[2]} words
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "${Object.keys(COMMANDS).join(' ')} help --help --version" -- "$cur"))
    return
  fi
  case "$prev" in
${valueCases.join('\n')}
  esac
  case "$cmd" in
${cases.join('\n')}
    help) words="${Object.keys(COMMANDS).join(' ')}" ;;
    *) words="" ;;
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F _scdv scdv
`;
}
