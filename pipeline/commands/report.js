// scdv report --model NAME: (re)write models/NAME/report.html, e.g. after `scdv eval`.
// scdv report clicks: CTR per similarity band, position, genre, site and arm from the reader-event log.
import path from 'node:path';
import { errors } from '../errors.js';
import { loadModel } from '../model/load.js';
import { writeReport } from '../report/index.js';
import { renderClicksPage } from '../report/clicks-page.js';
import { clickReport } from '../events/clicks.js';
import { formatClickReport } from '../events/clicks-text.js';
import { eventsDir } from '../events/log.js';
import { writeFileAtomic } from '../fsutil.js';
import { configFromFlags } from './common.js';
import { CONFIG_OPTION, opt } from './define.js';

/** @type {import('./define.js').CommandSpec} */
export const command = {
  description: 'Write models/NAME/report.html: the word map, the clusters and their coherence, the latest scdv eval, and reader clicks when the event log has some.',
  options: [
    opt('--model <name>', 'the model (required)'),
    opt('--corpus <file>', "corpus for the coherence figures (default: the model's training corpus)"),
    opt('--refresh', 'recompute models/NAME/analysis.json first'),
  ],
  examples: ['scdv report --model news', 'scdv report clicks --since 2026-11-01 --json'],
  run,
  subcommands: {
    clicks: {
      summary: 'CTR per similarity band, position, genre, site and arm, with 95 % intervals, from POST /v1/events',
      description: 'Reads the event log (config events.dir). Prints a table (or --json), writes a chart page '
        + '(<events dir>/clicks-report.html, or --html FILE) and flags bands and genres where one arm loses significantly.',
      options: [
        opt('--since <date>', 'events at or after this date or date-time (ISO 8601)'),
        opt('--until <date>', 'events at or before this date (the whole day) or date-time'),
        opt('--model <name>', 'only impressions of this model'),
        opt('--json', 'the figures as JSON'),
        opt('--html <file>', 'where to write the chart page (default: <events dir>/clicks-report.html)'),
        CONFIG_OPTION,
      ],
      examples: ['scdv report clicks', 'scdv report clicks --since 2026-11-01 --until 2026-11-30 --json'],
      run: clicks,
    },
  },
};

/** @param {Record<string, any>} values */
async function run(values) {
  if (!values.model) throw errors.USAGE('scdv report needs --model NAME (or: scdv report clicks)');
  const model = loadModel(values.model);
  model.wordTopics.close();
  // The reader-clicks section reads the built-in event log folder (a --config here would shadow the one of
  // `report clicks`, commander reading a parent's options after the subcommand too).
  const file = await writeReport(model, { corpus: values.corpus, refresh: values.refresh, log: (m) => process.stderr.write(`${m}\n`) });
  process.stdout.write(`${file}\n`);
}

/**
 * @param {string | undefined} v
 * @param {string} flag
 */
function dateFlag(v, flag) {
  if (v === undefined) return undefined;
  if (!/^\d{4}-\d{2}-\d{2}([T ][0-9:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(v) || Number.isNaN(Date.parse(v))) {
    throw errors.USAGE(`${flag} must be an ISO 8601 date or date-time (2026-11-01, 2026-11-01T09:00:00Z), got "${v}"`);
  }
  return v;
}

/** @param {Record<string, any>} values */
async function clicks(values) {
  const config = configFromFlags(values);
  const since = dateFlag(values.since, '--since');
  const until = dateFlag(values.until, '--until');
  if (since && until && Date.parse(since) > Date.parse(until)) throw errors.USAGE(`--since ${since} is after --until ${until}`);
  const dir = eventsDir(config.events);
  const report = await clickReport(dir, { since, until, model: values.model, bandWidth: config.events.bandWidth, minImpressions: config.events.minImpressions });
  const html = values.html ?? path.join(dir, 'clicks-report.html');
  if (report.totals.events > 0 || values.html) writeFileAtomic(html, renderClicksPage(report));
  if (values.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else process.stdout.write(formatClickReport(report));
  if (report.totals.events === 0) process.stderr.write(`report clicks: no events in ${dir}${since || until ? ' for this range' : ''}\n`);
  else process.stderr.write(`report clicks: chart page ${html}\n`);
}
