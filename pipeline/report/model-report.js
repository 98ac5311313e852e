// `models/<name>/report.html`: written at the end of `scdv train` and `scdv eval`, and by `scdv report`.
import path from 'node:path';
import { writeFileAtomic } from '../fsutil.js';
import { loadAnalysis } from '../inspect/analysis.js';
import { loadModel } from '../model/load.js';
import { readEval } from './eval-table.js';
import { renderReport } from './render.js';
import { renderClicks } from './clicks-page.js';
import { clickReport } from '../events/clicks.js';
import { eventsDir } from '../events/log.js';
import { DEFAULT_CONFIG } from '../config.js';

export const REPORT_FILE = 'report.html';

/**
 * @param {import('../inspect/analysis.js').ModelRef} model
 * @param {import('../inspect/analysis.js').AnalysisOptions & {events?: import('../config.js').Config['events']}} [opts] where
 *   coherence's corpus comes from; refresh; the event log (config events, default the built-in one)
 * @returns {Promise<string>} the report's path
 */
export async function writeReport(model, opts = {}) {
  const analysis = await loadAnalysis(model, opts);
  const events = opts.events ?? DEFAULT_CONFIG.events;
  // Reader clicks of this model, when the event log has any (scdv report clicks has the whole log).
  const clicks = await clickReport(eventsDir(events), { bandWidth: events.bandWidth, minImpressions: events.minImpressions, model: model.name });
  const html = renderReport({
    name: model.name, manifest: model.manifest, analysis, evaluation: readEval(model.dir),
    clicks: clicks.totals.impressions > 0 ? renderClicks(clicks) : undefined,
  });
  const file = path.join(model.dir, REPORT_FILE);
  writeFileAtomic(file, html);
  return file;
}

/**
 * Rewrite a model's report after a new evaluation (scdv eval), so it never says "no evaluation yet" over an
 * eval.json. A failure only warns, as in scdv train: the evaluation itself succeeded and is stored.
 * @param {string} name model name
 * @param {(msg: string) => void} log
 * @returns {Promise<string | null>} the report's path, or null when it could not be written
 */
export async function refreshReport(name, log) {
  try {
    const model = loadModel(name);
    model.wordTopics.close();
    const file = await writeReport(model, { log });
    log(`eval: report ${file}`);
    return file;
  } catch (err) {
    log(`eval: warning: report.html not refreshed: ${/** @type {Error} */ (err).message} (run scdv report --model ${name})`);
    return null;
  }
}
