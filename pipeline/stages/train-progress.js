// The progress lines of the Python training stages (workers/scdv/train.py) as bars: one bar per unit, each with its
// total known up front (epochs and EM iterations from the config, documents from the training corpus, words from
// the vocabulary). A stage whose unit changes (gmm: EM iterations, then assigning words) gets a second bar.
import { ProgressBar, formatSeconds, plural } from '../progress.js';

/**
 * @typedef {object} TrainProgressTotals
 * @property {number} epochs word2vec epochs
 * @property {number} documents documents of the training corpus (idf counts them)
 * @property {number} maxIterations the GMM's EM iteration cap (it stops earlier once converged)
 */

export class TrainProgress {
  /**
   * @param {import('./train.js').TrainStage} stage
   * @param {TrainProgressTotals} totals
   * @param {{stream?: NodeJS.WriteStream}} [opts]
   */
  constructor(stage, totals, opts = {}) {
    this.stage = stage;
    this.totals = totals;
    this.stream = opts.stream;
    /** @type {ProgressBar | null} */
    this.bar = null;
    /** @type {string} the phase the open bar counts */
    this.phase = '';
    /** EM iterations run, for the final line of the fit bar */
    this.iterations = 0;
    /** @type {number | null} */
    this.lastLoss = null;
    /** @type {number | null} the same loss before training */
    this.initialLoss = null;
    /** the stage's job completed: lines still in flight are ignored */
    this.finished = false;
    // The topics bar opens with the stage's first line, which brings its total (the vocabulary size).
    if (stage !== 'topics') this.open(stage === 'gmm' ? 'fit' : stage);
  }

  /**
   * Start the bar of a phase (finishing the previous one).
   * @param {string} phase
   * @param {number} [total]
   */
  open(phase, total) {
    this.closeBar();
    this.phase = phase;
    const t = this.totals;
    /** @type {Record<string, [string, string, number]>} label, unit, total */
    const bars = {
      word2vec: ['word2vec', 'epoch', t.epochs],
      idf: ['idf', 'document', t.documents],
      fit: ['gmm fit', 'EM iteration', t.maxIterations],
      assign: ['gmm assign', 'word', total ?? 0],
      topics: ['topics', 'word', total ?? 0],
    };
    const [label, unit, n] = bars[phase];
    this.bar = new ProgressBar(label, { unit, total: n, eta: phase !== 'fit', ...(this.stream ? { stream: this.stream } : {}) });
    this.bar.update({ done: 0, extra: this.startNote(phase) });
  }

  /** @param {string} phase */
  startNote(phase) {
    if (phase === 'word2vec') return '(building the vocabulary)';
    if (phase === 'fit') return `(at most ${this.totals.maxIterations}; EM stops once converged)`;
    if (phase === 'assign') return "(each word's cluster probabilities)";
    if (phase === 'topics') return "(each word's word-topic vector)";
    return '';
  }

  /**
   * One progress line of the Python stage.
   * @param {Record<string, any>} message
   */
  onMessage(message) {
    if (this.finished || message.phase === 'done' || message.phase === 'vocab') return;
    if (this.stage === 'word2vec' && message.epoch != null) {
      this.lastLoss = message.loss ?? null;
      this.initialLoss = message.initial_loss ?? null;
      this.bar?.update({ done: message.epoch, extra: lossNote(message.loss, message.initial_loss), ...(message.eta_s != null ? { etaSeconds: message.eta_s } : {}) });
    } else if (this.stage === 'idf' && message.documents != null) {
      this.bar?.update({ done: message.documents, ...(message.of ? { fraction: message.bytes_done / message.of } : {}) });
    } else if (this.stage === 'gmm' && message.phase === 'init') {
      this.bar?.update({ done: 0, extra: `(k-means start of ${plural(message.n_components, 'cluster')} on ${plural(message.n_fit_words, 'word vector')}; at most ${this.totals.maxIterations} iterations, EM stops once converged)` });
    } else if (this.stage === 'gmm' && message.iteration != null) {
      this.iterations = message.iteration;
      this.bar?.update({
        done: message.iteration, extra: `(mean log-likelihood per word ${Number(message.loglik).toFixed(4)}` +
          `${message.delta != null ? `, change ${Number(message.delta).toExponential(1)}` : ''}; at most ${this.totals.maxIterations})`,
        ...(message.eta_s != null ? { etaSeconds: message.eta_s } : {}),
      });
    } else if (this.stage === 'gmm' && message.phase === 'predict') {
      if (this.phase !== 'assign') this.open('assign', message.of);
      this.bar?.update({ done: message.words_done, extra: this.startNote('assign') });
    } else if (this.stage === 'topics' && message.words_done != null) {
      if (!this.bar) this.open('topics', message.of);
      this.bar?.update({ done: message.words_done, extra: this.startNote('topics'), ...(message.eta_s != null ? { etaSeconds: message.eta_s } : {}) });
    }
  }

  /**
   * Finish the open bar with its own closing words.
   * @param {string} [took] how long the whole stage took, when it is the stage's last bar
   */
  closeBar(took = '') {
    const bar = this.bar;
    if (!bar) return;
    if (this.phase === 'fit') {
      const converged = this.iterations < this.totals.maxIterations;
      bar.finish({ done: this.iterations, fraction: 1, extra: `${converged ? '(converged: no more iterations needed)' : '(stopped at the cap gmm.max_iter before converging)'} ${took}` });
    } else {
      bar.finish({ done: bar.state.total || bar.state.done });
    }
    this.bar = null;
  }

  /**
   * The stage's job completed: the last bar's final line says how long the stage took.
   * @param {number} seconds
   */
  finish(seconds) {
    this.finished = true;
    const bar = this.bar;
    if (!bar) return;
    const took = `done in ${formatSeconds(seconds)}`;
    if (this.phase === 'fit') return this.closeBar(took);
    if (this.phase === 'word2vec') {
      bar.finish({ done: this.totals.epochs, extra: `${this.lastLoss != null ? `${lossNote(this.lastLoss, this.initialLoss)} ` : ''}${took}` });
    } else {
      bar.finish({ done: bar.state.total || bar.state.done, extra: took });
    }
    this.bar = null;
  }
}

/**
 * word2vec's loss as the worker measures it after each epoch: the mean skip-gram negative-sampling loss of one word
 * pair on a fixed sample of the corpus's pairs (workers/scdv/word2vec.py PairLossSample; gensim's own float32 sum
 * rounds its terms away on a large corpus and can rise while the model improves), beside its untrained value.
 * @param {number | null | undefined} loss
 * @param {number | null | undefined} [initial]
 */
export function lossNote(loss, initial) {
  return loss == null ? '' : `(loss per word pair ${Number(loss).toFixed(3)}${initial != null ? `, untrained ${Number(initial).toFixed(3)}` : ''}: ` +
    'the mean on a fixed sample of pairs; lower is better)';
}
