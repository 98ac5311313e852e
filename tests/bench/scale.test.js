// The scaling benchmark's parts that decide its figures (no timings): the growth-exponent fit, the corpus
// generator's document lengths, which stage a process is counted for, the /proc walk and the chart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { SAMPLE_CORPUS } from '../../pipeline/paths.js';
import { descendants, extrapolate, fitGrowth, scaleChartSvg, StageSampler, stageOf } from './scale.lib.js';
import { sentenceCounts, sentencePools, synthesize } from './synthetic-corpus.js';

test('fitGrowth recovers the exponent and coefficient of a power law, and a least-squares slope of noisy points', () => {
  const exact = fitGrowth([1e3, 1e4, 1e5].map((n) => ({ n, y: 2e-6 * n ** 1.3 })));
  assert.ok(exact);
  assert.ok(Math.abs(exact.exponent - 1.3) < 1e-9, String(exact.exponent));
  assert.ok(Math.abs(exact.coefficient / 2e-6 - 1) < 1e-9);
  assert.ok(Math.abs(extrapolate(exact, 1e6) - 2e-6 * 1e6 ** 1.3) < 1e-6 * 2e-6 * 1e6 ** 1.3);
  // log10 n = 0, 1, 3 and log10 y = 0, 2, 3: least squares gives 39/42, not the end points' slope of 1
  const noisy = fitGrowth([{ n: 1, y: 1 }, { n: 10, y: 100 }, { n: 1000, y: 1000 }]);
  assert.ok(noisy && Math.abs(noisy.exponent - 39 / 42) < 1e-9, String(noisy?.exponent));
});

test('fitGrowth needs two sizes with a positive value: zero times and repeated sizes give no exponent', () => {
  assert.equal(fitGrowth([{ n: 1000, y: 1 }]), null);
  assert.equal(fitGrowth([{ n: 1000, y: 1 }, { n: 1000, y: 2 }]), null);
  assert.equal(fitGrowth([{ n: 1000, y: 1 }, { n: 10000, y: 0 }]), null);
  const f = fitGrowth([{ n: 1000, y: 1 }, { n: 10000, y: 0 }, { n: 100000, y: 100 }]);
  assert.ok(f && Math.abs(f.exponent - 1) < 1e-9 && f.points === 2);
});

test('synthesize draws document lengths from real sentence counts when given, and keeps 4-12 sentences by default', () => {
  const pools = sentencePools(SAMPLE_CORPUS);
  const counts = sentenceCounts(SAMPLE_CORPUS);
  assert.ok(counts.length > 0 && counts.every((c) => Number.isInteger(c) && c > 0));
  const sentencesOf = (/** @type {{title: string, body: string}} */ d) => 1 + (d.body.match(/[。！？!?]/g)?.length ?? 0);
  const long = [...synthesize(pools, 300, 7, [30])];
  const short = [...synthesize(pools, 300, 7)];
  const mean = (/** @type {number[]} */ xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  // 30 sentences per document against 4-12 (mean 8): the bodies are several times longer
  assert.ok(mean(long.map((d) => d.body.length)) > 2.5 * mean(short.map((d) => d.body.length)));
  assert.ok(mean(long.map(sentencesOf)) > 20, String(mean(long.map(sentencesOf))));
  assert.ok(short.every((d) => d.id.startsWith('syn-') && pools.has(d.category) && d.body.length > 0));
  // seeded: the same documents again
  assert.deepEqual([...synthesize(pools, 5, 7, counts)], [...synthesize(pools, 5, 7, counts)]);
});

test('stageOf: Python stages and tokenise workers by command line, the rest by the marked stage, Redis by none', () => {
  assert.equal(stageOf('/x/.venv/bin/python -m scdv.train word2vec --corpus c.txt --out w', 'tokenize'), 'word2vec');
  assert.equal(stageOf('/x/.venv/bin/python -m scdv.train gmm --corpus c.txt', 'tokenize'), 'gmm');
  assert.equal(stageOf('/x/.venv/bin/python -m scdv.analysis --model m', 'tokenize'), 'analysis');
  assert.equal(stageOf('/usr/bin/node /x/pipeline/cli.js worker tokenize --config-json {}', 'embed'), 'tokenize');
  // the lexicon's second tokenise run: the same workers, while the lexicon is the marked stage; then its count
  assert.equal(stageOf('/usr/bin/node /x/pipeline/cli.js worker tokenize --config-json {}', 'lexicon'), 'lexicon');
  assert.equal(stageOf('/x/.venv/bin/python -m scdv.lexicon --corpus l.txt --min-count 5 --out x', 'tokenize'), 'lexicon');
  assert.equal(stageOf('/usr/bin/node /x/pipeline/cli.js worker train --config-json {}', 'tokenize'), null);
  assert.equal(stageOf('redis-server *:6390', 'tokenize'), null);
  assert.equal(stageOf('/usr/bin/node something-else.js', 'index'), 'index');
});

test('descendants finds a running child with its command line and memory', async () => {
  const child = spawn('sleep', ['30'], { stdio: 'ignore' });
  try {
    await once(child, 'spawn');
    const found = descendants(process.pid).find((p) => p.pid === child.pid);
    assert.ok(found, 'the child is listed');
    assert.match(found.cmd, /^sleep 30$/);
    assert.ok(found.rss > 0 && found.hwm >= found.rss);
    assert.ok(found.cpu >= 0 && found.cpu < 5, String(found.cpu));
  } finally {
    child.kill();
  }
});

test('StageSampler counts a busy child\'s CPU seconds and memory for the stage marked while it ran', async () => {
  const sampler = new StageSampler(50);
  sampler.mark('embed');
  // 0.6 s of CPU (not of wall time: the machine may be shared), then idle long enough to be sampled again
  const busy = 'const u = () => { const c = process.cpuUsage(); return (c.user + c.system) / 1e6; }; while (u() < 0.6); setTimeout(() => {}, 400);';
  const child = spawn(process.execPath, ['-e', busy], { stdio: 'ignore' });
  await once(child, 'exit');
  sampler.mark('index');
  const { peaks, cpu } = sampler.stop();
  assert.ok(cpu.embed >= 0.6, `embed CPU ${cpu.embed}`);
  assert.ok((cpu.index ?? 0) < 0.3, `index CPU ${cpu.index}`);
  assert.ok(peaks.embed > 20 * 2 ** 20, 'this process and the child are resident');
});

test('scaleChartSvg draws every positive point on log-log axes with the report\'s line chart, one named line per stage', () => {
  const svg = scaleChartSvg([
    { name: 'word2vec', points: [{ n: 1e4, y: 100 }, { n: 1e5, y: 1000 }] },
    { name: 'search <p50>', points: [{ n: 1e4, y: 0.001 }, { n: 1e5, y: 0 }] },
  ], { title: 'growth', yLabel: 'seconds' });
  assert.match(svg, /^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  assert.match(svg, /<style>[^<]*\.chart \.frame\{/);
  assert.equal((svg.match(/<circle /g) ?? []).length, 3, 'the zero is left out');
  assert.match(svg, />word2vec</, 'legend names the stage');
  assert.match(svg, />search &lt;p50&gt;</);
  assert.match(svg, /<title>word2vec, 10,000 documents: 100<\/title>/);
  assert.match(svg, /<title>search &lt;p50&gt;, 10,000 documents: 0\.001<\/title>/);
  assert.match(svg, />10,000</, 'log x ticks at powers of ten');
  assert.match(svg, />100,000</);
  assert.match(svg, />documents</);
});

test('StageSampler keeps a Python stage\'s CPU under its stage after it exits and lingers unreaped', async () => {
  const sampler = new StageSampler(50);
  sampler.mark('tokenize');
  // A grandchild whose command line names the gmm stage, 0.6 s of CPU, then a zombie: its parent (sleep) never
  // reaps it, and a zombie's command line is empty.
  const busy = 'const u = () => { const c = process.cpuUsage(); return (c.user + c.system) / 1e6; }; while (u() < 0.6);';
  const parent = spawn('sh', ['-c', `"${process.execPath}" -e '${busy}' -- -m scdv.train gmm & exec sleep 30`], { stdio: 'ignore' });
  try {
    for (let i = 0; i < 200; i++) {
      await new Promise((r) => setTimeout(r, 50));
      const zombie = descendants(process.pid).length === 1; // only sleep is listed: the grandchild has exited
      if (zombie && i > 2) break;
    }
    await new Promise((r) => setTimeout(r, 200)); // samples of the zombie
    const { cpu } = sampler.stop();
    assert.ok(cpu.gmm >= 0.5, `gmm CPU ${cpu.gmm}`);
    assert.ok((cpu.tokenize ?? 0) < cpu.gmm, `tokenize CPU ${cpu.tokenize}`);
  } finally {
    parent.kill();
  }
});
