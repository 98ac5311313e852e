// Tokenizer throughput: the scdv_mecab addon against the `mecab` command.
//
//   node tests/bench/tokenize.bench.js [--corpus FILE] [--dicdir DIR] [--repeats 5] [--fork-docs 200]
//                                      [--with-filter '{"foldLongVowels":true}']
//
// Every contender reads the same NFKC-normalised text (one document per line, written to a
// temp file once). Throughput is MB (10^6 bytes of UTF-8 input) per second, the median over
// repeats; contenders are interleaved within each repeat. The last stdout line is JSON
// ending with addon_mb_s, cli_mb_s and ratio (= addon / cli, wall-clock). Progress goes to
// stderr. Per-CPU-second rates (cpu_ratio) are reported too: on a shared machine they are
// steadier than wall-clock rates. --with-filter adds a contender, the addon with those filter options
// over FILTER, timed right after the plain addon in every repeat (with_vs_addon_cpu: its CPU-second rate / the
// plain addon's), for the cost of a tokenizer option. --huge-pages adds two child processes, the addon with and
// without the dictionary's index in huge pages (tokenize.hugePages; a process-wide choice, so each in its own
// process), timed one after the other in every repeat: huge_vs_plain_cpu is the ratio of their CPU-second rates.
import { fork, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { NativeTagger } from '../../pipeline/tokenizer/native.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const IPADIC = '/var/lib/mecab/dic/ipadic-utf8';
const MB = 1e6;

/** @type {import('../../pipeline/tokenizer/native.js').FilterSpec} */
const FILTER = {
  keepPos: ['名詞', '動詞,自立', '形容詞,自立'],
  dropPos: ['名詞,非自立', '名詞,数', '名詞,形容動詞語幹', '名詞,副詞可能', '名詞,代名詞', '名詞,接尾', '名詞,特殊'],
  stopwords: ['する', 'なる', 'ある', 'いる', 'れる', 'られる', 'こと', 'もの', 'よう', 'ため', 'top'],
  singleChar: 'non-kanji',
  dropDigitsOnly: true,
  dropSymbolsOnly: true,
  lowercase: true,
  maxTokenBytes: 100,
};

/** @param {string} msg */
const log = (msg) => process.stderr.write(`[bench] ${msg}\n`);

/**
 * @typedef {object} Options
 * @property {string} corpus
 * @property {string} dicdir
 * @property {number} repeats
 * @property {number} forkDocs
 * @property {import('../../pipeline/tokenizer/native.js').FilterSpec | null} withFilter
 * @property {boolean} hugePages
 */

/** @returns {Options} */
function readOptions() {
  const { values } = parseArgs({
    options: {
      corpus: { type: 'string' },
      dicdir: { type: 'string' },
      repeats: { type: 'string', default: '5' },
      'fork-docs': { type: 'string', default: '200' },
      'with-filter': { type: 'string' },
      'huge-pages': { type: 'boolean', default: false },
    },
  });
  const repeats = Number(values.repeats);
  const forkDocs = Number(values['fork-docs']);
  if (!Number.isInteger(repeats) || repeats < 1) throw new Error(`--repeats must be a positive integer`);
  if (!Number.isInteger(forkDocs) || forkDocs < 1) throw new Error(`--fork-docs must be a positive integer`);
  const withFilter = values['with-filter'] === undefined ? null : JSON.parse(values['with-filter']);
  return { corpus: values.corpus ?? defaultCorpus(), dicdir: values.dicdir ?? defaultDicdir(), repeats, forkDocs, withFilter, hugePages: values['huge-pages'] ?? false };
}

/** @returns {string} */
function defaultCorpus() {
  const candidates = [
    path.resolve(REPO_ROOT, '../shared/corpora/livedoor/dev.jsonl'),
    path.join(REPO_ROOT, 'tests/fixtures/livedoor/sample.jsonl'),
  ];
  const found = candidates.find((p) => existsSync(p));
  if (!found) throw new Error(`no corpus found (tried ${candidates.join(', ')}); pass --corpus FILE`);
  return found;
}

/** @returns {string} */
function defaultDicdir() {
  const neologd = path.join(REPO_ROOT, 'dictionaries/build/neologd');
  return existsSync(path.join(neologd, 'sys.dic')) ? neologd : IPADIC;
}

/**
 * title + '\n' + body, NFKC, one line per document.
 * @param {string} file
 * @returns {string[]}
 */
function loadDocuments(file) {
  /** @type {string[]} */
  const docs = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const { title = '', body = '' } = JSON.parse(line);
    docs.push(`${title}\n${body}`.normalize('NFKC').replace(/\r\n|\r|\n/g, ' '));
  }
  if (docs.length === 0) throw new Error(`${file} holds no documents`);
  return docs;
}

/** @param {number[]} xs */
function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** @typedef {{ wall: number, cpu: number }} Timing seconds of wall-clock and of CPU (user + system) */

/**
 * Runs `mecab` over a file with stdout to /dev/null. A `sh` wrapper reports the child's CPU
 * time (`times`), which is steadier than wall time when other jobs share the cores.
 * @param {string[]} args
 * @returns {Promise<Timing>}
 */
function runCli(args) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const script = 'mecab "$@" >/dev/null && times';
    const child = spawn('sh', ['-c', script, 'mecab-bench', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const wall = (performance.now() - t0) / 1000;
      if (code !== 0 || stderr.trim()) return reject(new Error(`mecab exited ${code}: ${stderr.trim()}`));
      // `times` prints the shell's user/system times, then its children's.
      const times = [...(stdout.trim().split('\n')[1] ?? '').matchAll(/(\d+)m([\d.]+)s/g)];
      const cpu = times.reduce((sum, m) => sum + Number(m[1]) * 60 + Number(m[2]), 0);
      resolve({ wall, cpu });
    });
  });
}

/**
 * @param {NativeTagger} tagger
 * @param {string[]} docs
 * @param {(t: NativeTagger, doc: string) => string} fn
 * @returns {Timing}
 */
function timeSync(tagger, docs, fn) {
  let chars = 0; // consume the results so nothing is optimised away
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (const doc of docs) chars += fn(tagger, doc).length;
  const wall = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  if (chars < 0) throw new Error('unreachable');
  return { wall, cpu: (c.user + c.system) / 1e6 };
}

/**
 * tokenizeBatch with `inFlight` batches queued at a time.
 * @param {NativeTagger} tagger
 * @param {string[]} docs
 * @param {number} inFlight
 * @param {number} batchSize
 * @returns {Promise<number>} seconds
 */
async function timeBatch(tagger, docs, inFlight, batchSize) {
  let next = 0;
  const t0 = performance.now();
  const lane = async () => {
    while (next < docs.length) {
      const start = next;
      next += batchSize;
      await tagger.tokenizeBatch(docs.slice(start, start + batchSize));
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  return (performance.now() - t0) / 1000;
}

/**
 * Spawns one `mecab` per document; returns wall seconds.
 * @param {string[]} cliArgs
 * @param {string[]} docs
 */
function timeForkPerDoc(cliArgs, docs) {
  const t0 = performance.now();
  for (const doc of docs) {
    const r = spawnSync('mecab', cliArgs, { input: `${doc}\n`, stdio: ['pipe', 'ignore', 'pipe'] });
    if (r.status !== 0) throw new Error(`mecab exited ${r.status}: ${r.stderr}`);
  }
  return (performance.now() - t0) / 1000;
}

/**
 * The addon's raw parse must equal the command's output, or the comparison is unfair.
 * @param {NativeTagger} tagger
 * @param {string[]} cliArgs
 * @param {string[]} docs
 */
function checkSameOutput(tagger, cliArgs, docs) {
  const sample = docs.slice(0, 20);
  const cli = spawnSync('mecab', cliArgs, { input: `${sample.join('\n')}\n`, maxBuffer: 1 << 28 });
  const addon = sample.map((d) => tagger.parse(d)).join('');
  if (cli.stdout.toString('utf8') !== addon) {
    log('WARNING: addon parse() output differs from the mecab command on the first 20 documents');
  } else {
    log('check: addon parse() == mecab output on the first 20 documents');
  }
}

/**
 * @param {Array<[string, number]>} rows
 * @param {number} bytes
 */
function printTable(rows, bytes) {
  console.log(`| contender | MB/s (median) | seconds for ${(bytes / MB).toFixed(2)} MB |`);
  console.log('| --- | ---: | ---: |');
  for (const [name, mbs] of rows) {
    console.log(`| ${name} | ${mbs.toFixed(2)} | ${(bytes / MB / mbs).toFixed(2)} |`);
  }
}

/**
 * A child process that tokenises `docs` with its own tagger (hugePages as given) each time it is asked.
 * @param {string} textFile the documents, one per line
 * @param {string} dicdir
 * @param {boolean} hugePages
 */
function startTaggerChild(textFile, dicdir, hugePages) {
  const child = fork(fileURLToPath(import.meta.url), ['--tagger-child', JSON.stringify({ textFile, dicdir, hugePages })], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  /** @type {((t: Timing & {hugePageBytes: number}) => void)[]} */
  const waiting = [];
  /** @type {() => void} */
  let isReady = () => {};
  const ready = new Promise((/** @type {(v?: unknown) => void} */ r) => { isReady = r; });
  child.on('message', (/** @type {any} */ m) => (m.ready ? isReady() : waiting.shift()?.(m)));
  return {
    ready,
    /** @returns {Promise<Timing & {hugePageBytes: number}>} */
    run: () => new Promise((resolve) => { waiting.push(resolve); child.send('run'); }),
    stop: () => child.kill(),
  };
}

/** The child's side of startTaggerChild. */
function taggerChild() {
  const { textFile, dicdir, hugePages } = JSON.parse(process.argv[process.argv.indexOf('--tagger-child') + 1]);
  const docs = readFileSync(textFile, 'utf8').split('\n').filter(Boolean);
  const tagger = new NativeTagger({ dicdir, filter: FILTER, hugePages });
  timeSync(tagger, docs, (t, d) => t.tokenize(d)); // warm-up
  // The index is moved once as much text as 1/32 of it has been parsed, in the background: parse until it is, or
  // for 30 s at most (a machine without transparent huge pages never moves it: the child then runs as it is).
  const giveUpAt = Date.now() + 30_000;
  const waitMoved = () => {
    if (!hugePages || tagger.hugePageBytes > 0 || Date.now() > giveUpAt) {
      if (hugePages && tagger.hugePageBytes === 0) log('WARNING: the index was not moved into huge pages (transparent huge pages off, or the mapping not 2 MB-aligned)');
      process.on('message', () => process.send?.({ ...timeSync(tagger, docs, (t, d) => t.tokenize(d)), hugePageBytes: tagger.hugePageBytes }));
      process.send?.({ ready: true });
      return;
    }
    for (const d of docs.slice(0, 200)) tagger.tokenize(d);
    setTimeout(waitMoved, 50);
  };
  waitMoved();
}

async function main() {
  const opts = readOptions();
  const docs = loadDocuments(opts.corpus);
  const tmp = mkdtempSync(path.join(tmpdir(), 'scdv-bench-'));
  try {
    const textFile = path.join(tmp, 'corpus.txt');
    const emptyFile = path.join(tmp, 'empty.txt');
    writeFileSync(textFile, `${docs.join('\n')}\n`);
    writeFileSync(emptyFile, '');
    const bytes = docs.reduce((n, d) => n + Buffer.byteLength(d) + 1, 0);
    const maxLine = docs.reduce((n, d) => Math.max(n, Buffer.byteLength(d)), 0);
    // -b: mecab's default 8 KiB line buffer would split long articles (with a warning).
    const cliArgs = ['-d', opts.dicdir, '-b', String(maxLine + 16)];
    const forkDocs = docs.slice(0, opts.forkDocs);
    const forkBytes = forkDocs.reduce((n, d) => n + Buffer.byteLength(d) + 1, 0);

    const tagger = new NativeTagger({ dicdir: opts.dicdir, filter: FILTER });
    const withTagger = opts.withFilter && new NativeTagger({ dicdir: opts.dicdir, filter: { ...FILTER, ...opts.withFilter } });
    log(`corpus ${opts.corpus}: ${docs.length} docs, ${(bytes / MB).toFixed(2)} MB (NFKC)`);
    log(`dictionary ${opts.dicdir} (${tagger.dictionaryInfo.size} entries), mecab ${NativeTagger.mecabVersion}`);
    checkSameOutput(tagger, cliArgs, docs);

    log('warm-up');
    await runCli([...cliArgs, textFile]);
    timeSync(tagger, docs, (t, d) => t.tokenize(d));
    if (withTagger) timeSync(withTagger, docs, (t, d) => t.tokenize(d));

    const children = opts.hugePages ? { plain: startTaggerChild(textFile, opts.dicdir, false), huge: startTaggerChild(textFile, opts.dicdir, true) } : null;
    if (children) await Promise.all([children.plain.ready, children.huge.ready]);
    let hugePageBytes = 0;
    /** @type {Record<string, number[]>} */
    const mbs = { cli: [], addon: [], raw: [], fork: [], batch: [], cliCpu: [], addonCpu: [], withCpu: [], plainChildCpu: [], hugeChildCpu: [] };
    /** @type {number[]} */
    const startup = [];
    const rate = (/** @type {number} */ n, /** @type {number} */ seconds) => n / MB / seconds;
    for (let r = 1; r <= opts.repeats; r++) {
      startup.push((await runCli([...cliArgs, emptyFile])).wall);
      const cli = await runCli([...cliArgs, textFile]);
      const addon = timeSync(tagger, docs, (t, d) => t.tokenize(d));
      mbs.cli.push(rate(bytes, cli.wall));
      mbs.cliCpu.push(rate(bytes, cli.cpu));
      mbs.addon.push(rate(bytes, addon.wall));
      mbs.addonCpu.push(rate(bytes, addon.cpu));
      if (withTagger) mbs.withCpu.push(rate(bytes, timeSync(withTagger, docs, (t, d) => t.tokenize(d)).cpu));
      mbs.raw.push(rate(bytes, timeSync(tagger, docs, (t, d) => t.parse(d)).wall));
      mbs.fork.push(rate(forkBytes, timeForkPerDoc(cliArgs, forkDocs)));
      mbs.batch.push(rate(bytes, await timeBatch(tagger, docs, 2, 32)));
      if (children) {
        // Alternating which goes first.
        const order = r % 2 ? ['plain', 'huge'] : ['huge', 'plain'];
        for (const which of /** @type {('plain' | 'huge')[]} */ (order)) {
          const t = await children[which].run();
          mbs[`${which}ChildCpu`].push(rate(bytes, t.cpu));
          if (which === 'huge') hugePageBytes = t.hugePageBytes;
        }
      }
      const f = (/** @type {number[]} */ xs) => xs[r - 1].toFixed(2);
      log(
        `repeat ${r}/${opts.repeats} (MB/s): cli ${f(mbs.cli)} (cpu ${f(mbs.cliCpu)}), addon ${f(mbs.addon)} ` +
          `(cpu ${f(mbs.addonCpu)}${withTagger ? `, with-filter cpu ${f(mbs.withCpu)}` : ''}), raw ${f(mbs.raw)}, ` +
          `fork ${f(mbs.fork)}, batch ${f(mbs.batch)}${children ? `, child cpu plain ${f(mbs.plainChildCpu)} huge pages ${f(mbs.hugeChildCpu)}` : ''}; ` +
          `load ${loadavg()[0].toFixed(2)}`,
      );
    }
    children?.plain.stop();
    children?.huge.stop();

    const cli = median(mbs.cli);
    const addon = median(mbs.addon);
    printTable(
      [
        ['(a) mecab CLI, one process, file -> /dev/null', cli],
        ['(b) addon tokenize(), sync, per document', addon],
        ['(c) addon parse(), raw MeCab text', median(mbs.raw)],
        [`(d) mecab fork per document (first ${forkDocs.length} docs)`, median(mbs.fork)],
        ['(e) addon tokenizeBatch, 2 in flight (thread pool)', median(mbs.batch)],
        ['(a) mecab CLI, per CPU-second', median(mbs.cliCpu)],
        ['(b) addon tokenize(), per CPU-second', median(mbs.addonCpu)],
        ...(withTagger ? [/** @type {[string, number]} */ ([`(f) addon tokenize() with ${JSON.stringify(opts.withFilter)}, per CPU-second`, median(mbs.withCpu)])] : []),
        ...(children ? /** @type {[string, number][]} */ ([
          ['(g) addon tokenize() in a child process, per CPU-second', median(mbs.plainChildCpu)],
          [`(h) the same, index in huge pages (${(hugePageBytes / 2 ** 20).toFixed(0)} MiB), per CPU-second`, median(mbs.hugeChildCpu)],
        ]) : []),
      ],
      bytes,
    );
    const startupMs = median(startup) * 1000;
    console.log(`mecab CLI startup on empty input: ${startupMs.toFixed(1)} ms (not subtracted)`);
    console.log(
      JSON.stringify({
        dictionary: opts.dicdir,
        dictionary_entries: tagger.dictionaryInfo.size,
        corpus: opts.corpus,
        docs: docs.length,
        mb: +(bytes / MB).toFixed(3),
        repeats: opts.repeats,
        cli_startup_ms: +startupMs.toFixed(1),
        raw_parse_mb_s: +median(mbs.raw).toFixed(3),
        fork_mb_s: +median(mbs.fork).toFixed(3),
        batch_mb_s: +median(mbs.batch).toFixed(3),
        cli_cpu_mb_s: +median(mbs.cliCpu).toFixed(3),
        addon_cpu_mb_s: +median(mbs.addonCpu).toFixed(3),
        cpu_ratio: +(median(mbs.addonCpu) / median(mbs.cliCpu)).toFixed(3),
        ...(withTagger ? {
          with_filter: opts.withFilter,
          with_cpu_mb_s: +median(mbs.withCpu).toFixed(3),
          with_vs_addon_cpu: +(median(mbs.withCpu) / median(mbs.addonCpu)).toFixed(3),
        } : {}),
        ...(children ? {
          huge_page_bytes: hugePageBytes,
          plain_child_cpu_mb_s: +median(mbs.plainChildCpu).toFixed(3),
          huge_child_cpu_mb_s: +median(mbs.hugeChildCpu).toFixed(3),
          huge_vs_plain_cpu: +(median(mbs.hugeChildCpu) / median(mbs.plainChildCpu)).toFixed(3),
        } : {}),
        load_avg_1m: +loadavg()[0].toFixed(2),
        addon_mb_s: +addon.toFixed(3),
        cli_mb_s: +cli.toFixed(3),
        ratio: +(addon / cli).toFixed(3),
      }),
    );
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

if (process.argv.includes('--tagger-child')) taggerChild();
else main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.message : err}\n`);
  process.exitCode = 1;
});
