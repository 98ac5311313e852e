// Tokenizer throughput: the scdv_mecab addon against the `mecab` command.
//
//   node tests/bench/tokenize.bench.js [--corpus FILE] [--dicdir DIR] [--repeats 5] [--fork-docs 200]
//
// Every contender reads the same NFKC-normalised text (one document per line, written to a
// temp file once). Throughput is MB (10^6 bytes of UTF-8 input) per second, the median over
// repeats; contenders are interleaved within each repeat. The last stdout line is JSON
// ending with addon_mb_s, cli_mb_s and ratio (= addon / cli). Progress goes to stderr.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
 */

/** @returns {Options} */
function readOptions() {
  const { values } = parseArgs({
    options: {
      corpus: { type: 'string' },
      dicdir: { type: 'string' },
      repeats: { type: 'string', default: '5' },
      'fork-docs': { type: 'string', default: '200' },
    },
  });
  const repeats = Number(values.repeats);
  const forkDocs = Number(values['fork-docs']);
  if (!Number.isInteger(repeats) || repeats < 1) throw new Error(`--repeats must be a positive integer`);
  if (!Number.isInteger(forkDocs) || forkDocs < 1) throw new Error(`--fork-docs must be a positive integer`);
  return { corpus: values.corpus ?? defaultCorpus(), dicdir: values.dicdir ?? defaultDicdir(), repeats, forkDocs };
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

/**
 * Runs `mecab` over a file with stdout to /dev/null; returns wall seconds.
 * @param {string[]} args
 * @returns {Promise<number>}
 */
function runCli(args) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn('mecab', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const seconds = (performance.now() - t0) / 1000;
      if (code !== 0 || stderr.trim()) reject(new Error(`mecab exited ${code}: ${stderr.trim()}`));
      else resolve(seconds);
    });
  });
}

/**
 * @param {NativeTagger} tagger
 * @param {string[]} docs
 * @param {(t: NativeTagger, doc: string) => string} fn
 * @returns {number} seconds
 */
function timeSync(tagger, docs, fn) {
  let chars = 0; // consume the results so nothing is optimised away
  const t0 = performance.now();
  for (const doc of docs) chars += fn(tagger, doc).length;
  const seconds = (performance.now() - t0) / 1000;
  if (chars < 0) throw new Error('unreachable');
  return seconds;
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
    log(`corpus ${opts.corpus}: ${docs.length} docs, ${(bytes / MB).toFixed(2)} MB (NFKC)`);
    log(`dictionary ${opts.dicdir} (${tagger.dictionaryInfo.size} entries), mecab ${NativeTagger.mecabVersion}`);
    checkSameOutput(tagger, cliArgs, docs);

    log('warm-up');
    await runCli([...cliArgs, textFile]);
    timeSync(tagger, docs, (t, d) => t.tokenize(d));

    /** @type {Record<string, number[]>} */
    const mbs = { cli: [], addon: [], raw: [], fork: [], batch: [] };
    /** @type {number[]} */
    const startup = [];
    for (let r = 1; r <= opts.repeats; r++) {
      startup.push(await runCli([...cliArgs, emptyFile]));
      mbs.cli.push(bytes / MB / (await runCli([...cliArgs, textFile])));
      mbs.addon.push(bytes / MB / timeSync(tagger, docs, (t, d) => t.tokenize(d)));
      mbs.raw.push(bytes / MB / timeSync(tagger, docs, (t, d) => t.parse(d)));
      mbs.fork.push(forkBytes / MB / timeForkPerDoc(cliArgs, forkDocs));
      mbs.batch.push(bytes / MB / (await timeBatch(tagger, docs, 2, 32)));
      log(
        `repeat ${r}/${opts.repeats}: cli ${mbs.cli[r - 1].toFixed(2)}, addon ${mbs.addon[r - 1].toFixed(2)}, ` +
          `raw ${mbs.raw[r - 1].toFixed(2)}, fork ${mbs.fork[r - 1].toFixed(2)}, batch ${mbs.batch[r - 1].toFixed(2)} MB/s`,
      );
    }

    const cli = median(mbs.cli);
    const addon = median(mbs.addon);
    printTable(
      [
        ['(a) mecab CLI, one process, file -> /dev/null', cli],
        ['(b) addon tokenize(), sync, per document', addon],
        ['(c) addon parse(), raw MeCab text', median(mbs.raw)],
        [`(d) mecab fork per document (first ${forkDocs.length} docs)`, median(mbs.fork)],
        ['(e) addon tokenizeBatch, 2 in flight (thread pool)', median(mbs.batch)],
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
        addon_mb_s: +addon.toFixed(3),
        cli_mb_s: +cli.toFixed(3),
        ratio: +(addon / cli).toFixed(3),
      }),
    );
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.message : err}\n`);
  process.exitCode = 1;
});
