// scdv report --model NAME: (re)write models/NAME/report.html, e.g. after `scdv eval`.
import { errors } from '../errors.js';
import { loadModel } from '../model/load.js';
import { writeReport } from '../report/index.js';
import { opt } from './define.js';

/** @type {import('./define.js').CommandSpec} */
export const command = {
  description: 'Write models/NAME/report.html: the word map, the clusters and their coherence, the latest scdv eval.',
  options: [
    opt('--model <name>', 'the model (required)'),
    opt('--corpus <file>', "corpus for the coherence figures (default: the model's training corpus)"),
    opt('--refresh', 'recompute models/NAME/analysis.json first'),
  ],
  examples: ['scdv report --model news'],
  run,
};

/** @param {Record<string, any>} values */
async function run(values) {
  if (!values.model) throw errors.USAGE('scdv report needs --model NAME');
  const model = loadModel(values.model);
  model.wordTopics.close();
  const file = await writeReport(model, { corpus: values.corpus, refresh: values.refresh, log: (m) => process.stderr.write(`${m}\n`) });
  process.stdout.write(`${file}\n`);
}
