// `models/<name>/report.html`: written at the end of `scdv train` and by `scdv report`.
import path from 'node:path';
import { writeFileAtomic } from '../fsutil.js';
import { loadAnalysis } from '../inspect/analysis.js';
import { readEval } from './eval-table.js';
import { renderReport } from './render.js';

export const REPORT_FILE = 'report.html';

/**
 * @param {import('../inspect/analysis.js').ModelRef} model
 * @param {import('../inspect/analysis.js').AnalysisOptions} [opts] where coherence's corpus comes from; refresh
 * @returns {Promise<string>} the report's path
 */
export async function writeReport(model, opts = {}) {
  const analysis = await loadAnalysis(model, opts);
  const html = renderReport({ name: model.name, manifest: model.manifest, analysis, evaluation: readEval(model.dir) });
  const file = path.join(model.dir, REPORT_FILE);
  writeFileAtomic(file, html);
  return file;
}
