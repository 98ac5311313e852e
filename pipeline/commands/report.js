// scdv report --model NAME: (re)write models/NAME/report.html, e.g. after `scdv eval`.
import { parseArgs } from 'node:util';
import { errors } from '../errors.js';
import { loadModel } from '../model/load.js';
import { writeReport } from '../report/index.js';

/** @param {string[]} argv */
export async function run(argv) {
  const { values } = parseArgs({
    args: argv,
    options: { model: { type: 'string' }, corpus: { type: 'string' }, refresh: { type: 'boolean', default: false } },
  });
  if (!values.model) throw errors.USAGE('scdv report needs --model NAME');
  const model = loadModel(values.model);
  model.wordTopics.close();
  const file = await writeReport(model, { corpus: values.corpus, refresh: values.refresh, log: (m) => process.stderr.write(`${m}\n`) });
  process.stdout.write(`${file}\n`);
}
