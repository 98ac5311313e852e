// A progress line for long jobs: redrawn in place on a terminal; in a log (not a TTY), one line per meaningful step.
// A bar counts one unit from start to end (named at construction: epoch, line, word…), with its total known up front.

/**
 * @typedef {object} ProgressState
 * @property {number} done units finished (e.g. corpus lines)
 * @property {number} [total] overrides the total given at construction (0 or absent: unknown, no bar drawn)
 * @property {string} [extra] free text after the count (rates, what the numbers are)
 * @property {number} [fraction] finer-grained completion (0..1), for the ETA and the bar
 * @property {number} [etaSeconds] the worker's own estimate, shown instead of one from elapsed time
 */

/** A bar with at most this many steps gets a log line for every step; a longer one, one per interval. */
const STEPWISE_MAX = 50;

/**
 * "1 shard", "2 shards", "0 shards".
 * @param {number} count
 * @param {string} noun singular; the plural adds "s"
 */
export function plural(count, noun) {
  return `${count} ${count === 1 ? noun : `${noun}s`}`;
}

export class ProgressBar {
  /**
   * @param {string} label what runs (word2vec, tokenize)
   * @param {{unit?: string, total?: number, eta?: boolean, stream?: NodeJS.WriteStream, intervalMs?: number, width?: number}} [opts]
   *   unit: the singular noun of what `done` counts (epoch, line, word); total: how many there will be;
   *   eta: false when the total is only a cap (EM iterations), so an estimate from it would mislead
   */
  constructor(label, opts = {}) {
    this.label = label;
    this.unit = opts.unit ?? '';
    this.eta = opts.eta ?? true;
    this.stream = opts.stream ?? process.stderr;
    this.tty = Boolean(this.stream.isTTY);
    this.intervalMs = opts.intervalMs ?? (this.tty ? 100 : 5000);
    this.width = opts.width ?? 24;
    this.started = Date.now();
    this.lastDraw = 0;
    this.lastLine = '';
    /** @type {number | null} `done` of the last line written to a log */
    this.lastLoggedDone = null;
    this.finished = false;
    /** @type {ProgressState & {total: number}} */
    this.state = { done: 0, total: opts.total ?? 0 };
  }

  /** @param {ProgressState} state */
  update(state) {
    if (this.finished) return;
    this.state = { ...state, total: state.total ?? this.state.total };
    const now = Date.now();
    if (this.tty) {
      if (now - this.lastDraw >= this.intervalMs) this.draw();
      return;
    }
    // A log gets the first state, each step of a short bar, and otherwise a line per interval when the count moved;
    // the last step is left to finish(), which says how it ended.
    const { done, total } = this.state;
    if (total > 0 && done >= total) return;
    const moved = done !== this.lastLoggedDone;
    const stepwise = total > 0 && total <= STEPWISE_MAX;
    if (this.lastLoggedDone === null || (moved && (stepwise || now - this.lastDraw >= this.intervalMs))) this.draw();
  }

  /** The current line, also used by tests. */
  render() {
    const { done, total, extra = '' } = this.state;
    const known = total > 0;
    const fraction = Math.min(1, this.state.fraction ?? (known ? done / total : 0));
    const elapsed = (Date.now() - this.started) / 1000;
    const estimate = this.state.etaSeconds ?? (fraction > 0 && fraction < 1 ? elapsed * (1 - fraction) / fraction : null);
    const eta = estimate != null && fraction < 1 && !this.finished && this.eta ? `ETA ${formatSeconds(estimate)}` : '';
    const filled = Math.round(fraction * this.width);
    const bar = known ? `[${'#'.repeat(filled)}${'-'.repeat(this.width - filled)}]` : '';
    // The noun agrees with the total ("3/10 epochs", "1/1 epoch"); without a total, with the count.
    const count = known ? `${done}/${plural(total, this.unit)}` : this.unit ? plural(done, this.unit) : '';
    return `${this.label} ${bar} ${count} ${extra} ${eta}`.replace(/\s+/g, ' ').trim();
  }

  draw() {
    const line = this.render();
    this.lastDraw = Date.now();
    if (!this.tty && line === this.lastLine) return; // a log file gets each distinct line once
    this.lastLine = line;
    this.lastLoggedDone = this.state.done;
    this.stream.write(this.tty ? `\r\x1b[2K${line}` : `${line}\n`);
  }

  /**
   * Final line (and newline on a terminal); later updates are ignored.
   * @param {Partial<ProgressState>} [state] the final state, e.g. `{extra: 'done in 3s'}`
   */
  finish(state = {}) {
    if (this.finished) return;
    this.state = { ...this.state, ...state, total: state.total ?? this.state.total };
    this.finished = true;
    this.draw();
    if (this.tty) this.stream.write('\n');
  }
}

/** @param {number} seconds */
export function formatSeconds(seconds) {
  if (!Number.isFinite(seconds)) return '?';
  if (seconds < 60) return `${seconds.toFixed(0)}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m${String(Math.round(seconds % 60)).padStart(2, '0')}s`;
  return `${Math.floor(seconds / 3600)}h${String(Math.round((seconds % 3600) / 60)).padStart(2, '0')}m`;
}
