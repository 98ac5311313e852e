// A progress line for long jobs: redrawn in place on a terminal, printed every few seconds otherwise.

/**
 * @typedef {object} ProgressState
 * @property {number} done units finished (e.g. shards)
 * @property {number} total
 * @property {string} [unit]
 * @property {string} [extra] free text after the bar (docs, rates)
 * @property {number} [fraction] finer-grained completion (0..1), for the ETA and the bar
 * @property {number} [etaSeconds] the worker's own estimate, shown instead of one from elapsed time
 */

export class ProgressBar {
  /**
   * @param {string} label
   * @param {{stream?: NodeJS.WriteStream, intervalMs?: number, width?: number}} [opts]
   */
  constructor(label, opts = {}) {
    this.label = label;
    this.stream = opts.stream ?? process.stderr;
    this.tty = Boolean(this.stream.isTTY);
    this.intervalMs = opts.intervalMs ?? (this.tty ? 100 : 5000);
    this.width = opts.width ?? 24;
    this.started = Date.now();
    this.lastDraw = 0;
    this.lastLine = '';
    /** @type {ProgressState} */
    this.state = { done: 0, total: 0 };
  }

  /** @param {ProgressState} state */
  update(state) {
    this.state = state;
    const now = Date.now();
    if (now - this.lastDraw >= this.intervalMs) {
      this.lastDraw = now;
      this.draw();
    }
  }

  /** The current line, also used by tests. */
  render() {
    const { done, total, unit = '', extra = '' } = this.state;
    const fraction = Math.min(1, this.state.fraction ?? (total ? done / total : 0));
    const filled = Math.round(fraction * this.width);
    const elapsed = (Date.now() - this.started) / 1000;
    const estimate = this.state.etaSeconds ?? (fraction > 0 && fraction < 1 ? elapsed * (1 - fraction) / fraction : null);
    const eta = estimate != null && fraction < 1 ? `ETA ${formatSeconds(estimate)}` : '';
    const bar = `[${'#'.repeat(filled)}${'-'.repeat(this.width - filled)}]`;
    return `${this.label} ${bar} ${done}/${total} ${unit} ${extra} ${eta}`.replace(/\s+/g, ' ').trim();
  }

  draw() {
    const line = this.render();
    if (!this.tty && line === this.lastLine) return; // a log file gets each distinct line once
    this.lastLine = line;
    this.stream.write(this.tty ? `\r\x1b[2K${line}` : `${line}\n`);
  }

  /** Final redraw and newline. */
  finish() {
    this.draw();
    if (this.tty) this.stream.write('\n');
  }
}

/** @param {number} s */
export function formatSeconds(s) {
  if (!Number.isFinite(s)) return '?';
  if (s < 60) return `${s.toFixed(0)}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.round((s % 3600) / 60)).padStart(2, '0')}m`;
}
