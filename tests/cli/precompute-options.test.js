// scdv precompute's list options (as the match route's: pipeline/match/rerank.js) are checked before any work:
// a bad value exits 2 with a message naming the flag and what it must be.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { REPO_ROOT } from '../../pipeline/paths.js';

const CLI = path.join(REPO_ROOT, 'pipeline', 'cli.js');

test('scdv precompute: bad --collapse, --duplicate-threshold, --recency-half-life, --max-per-site exit 2 naming the flag', () => {
  const cases = [
    [['--collapse', 'yes'], /--collapse must be on or off, got "yes"/],
    [['--duplicate-threshold', '1.5'], /--duplicate-threshold must be a number from 0 to 1, got "1.5"/],
    [['--recency-half-life', '0d'], /--recency-half-life must be a whole number above 0 and a unit s, m, h, d or w, such as 7d, 12h, 90m, got "0d"/],
    [['--recency-half-life', '7 days'], /--recency-half-life must be a whole number above 0/],
    [['--max-per-site', '0'], /--max-per-site must be a whole number from 1 to 1000, got "0"/],
  ];
  for (const [args, re] of /** @type {[string[], RegExp][]} */ (cases)) {
    const r = spawnSync(process.execPath, [CLI, 'precompute', '--target', 'ads', ...args], { encoding: 'utf8', env: { ...process.env, REDIS_URL: '' } });
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, re);
  }
});
