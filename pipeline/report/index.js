// `models/<name>/report.html`, the folder's public face: writing a model's report (model-report.js); its page
// (render.js) and the clicks section (clicks-page.js).
export { REPORT_FILE, writeReport, refreshReport } from './model-report.js';
