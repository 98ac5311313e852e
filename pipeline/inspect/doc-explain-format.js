// Readable text of `scdv inspect doc` and `scdv explain` (their --json output is the objects themselves).

/** @param {number} x */
const pct = (x) => `${(100 * x).toFixed(1)} %`;
/** @param {number} x */
const signed = (x) => (x >= 0 ? '+' : '') + x.toFixed(4);
/** @param {{word: string, contribution: number}[] | undefined} ws */
const wordList = (ws) => (ws ?? []).filter((w) => Math.abs(w.contribution) >= 5e-5).map((w) => `${w.word} ${signed(w.contribution)}`).join(', ');

/** @param {Record<string, any>} d */
function docLine(d) {
  const parts = [d.id !== null ? `"${d.id}"` : '(text)'];
  if (d.title) parts.push(d.title);
  const facts = [`${d.nnz} dims`, `vector from ${d.vectorSource === 'store' ? 'the store' : 'its text'}`];
  if (d.knownWords !== undefined) facts.push(`${d.knownWords} known words, ${d.unknownWords} unknown`);
  if (d.agreementWithStored !== undefined) facts.push(`agreement with the stored vector ${d.agreementWithStored.toFixed(4)}`);
  return `${parts.join('  ')}\n  ${facts.join('; ')}`;
}

/**
 * @param {ReturnType<typeof import('./doc-explain.js').inspectDocument>} result
 */
export function formatInspectDocument(result) {
  const out = [`model ${result.model}${result.collection ? `, collection ${result.collection}` : ''}`, docLine(result.document)];
  for (const w of result.warnings) out.push(`warning: ${w}`);
  out.push('', `topics (share of the vector's squared norm; ${result.topics.length} of ${result.topicsTotal} clusters shown, sum over all ${result.check.topicShareSum.toFixed(4)}):`);
  for (const t of result.topics) {
    out.push(`  k=${String(t.cluster).padEnd(4)} ${pct(t.share).padStart(7)}  [${t.clusterWords.join(' ')}]`);
    if (t.words?.length) out.push(`  ${' '.repeat(14)} carried by: ${wordList(t.words)}`);
  }
  if (result.words) {
    out.push('', `words (share of the vector; ${result.words.length} of ${result.wordsTotal} known words shown, sum over all ${result.check.wordShareSum?.toFixed(4)}):`);
    for (const w of result.words) out.push(`  ${pct(w.share).padStart(7)}  ${w.word}${w.tf > 1 ? ` (x${w.tf})` : ''}  topics ${w.clusters.join(', ')}`);
    if (result.unknownWords?.length) out.push(`  not in the model: ${result.unknownWords.join(' ')}`);
  }
  return out.join('\n') + '\n';
}

/**
 * @param {ReturnType<typeof import('./doc-explain.js').explainPair>} result
 */
export function formatExplain(result) {
  const out = [`model ${result.model}`, `A ${docLine(result.a)}`, `B ${docLine(result.b)}`];
  for (const w of result.warnings) out.push(`warning: ${w}`);
  out.push('', `score (cosine) ${result.score.toFixed(4)}, split over ${result.topicsTotal} shared topics (${result.topics.length} shown; sum ${result.check.topicSum.toFixed(4)}):`);
  for (const t of result.topics) {
    out.push(`  k=${String(t.cluster).padEnd(4)} ${signed(t.contribution)} (${pct(t.share).padStart(7)})  [${t.clusterWords.join(' ')}]`);
    if (t.wordsA?.length) out.push(`  ${' '.repeat(8)} A: ${wordList(t.wordsA)}`);
    if (t.wordsB?.length) out.push(`  ${' '.repeat(8)} B: ${wordList(t.wordsB)}`);
    if (t.lexicalWords?.length) out.push(`  ${' '.repeat(8)} words: ${wordList(t.lexicalWords)}`);
  }
  if (result.lexicalWords) {
    out.push('', `the lexical block word by word (a word's TF-IDF weight in A × in B; sum over all ${result.check.lexicalWordSum?.toFixed(4)}):`);
    out.push(result.lexicalWords.length ? `  ${wordList(result.lexicalWords)}` : '  none: the two texts share no word of the lexicon');
  }
  if (result.sharedWords) {
    out.push('', 'shared words (contribution to the score through A\'s side, B\'s side):');
    if (!result.sharedWords.length) out.push('  none: the match comes from different words of the same topics');
    const carrying = result.sharedWords.filter((w) => Math.abs(w.a) + Math.abs(w.b) >= 5e-5);
    for (const w of carrying) out.push(`  ${w.word}  A ${signed(w.a)}  B ${signed(w.b)}`);
    if (carrying.length < result.sharedWords.length) out.push(`  (${result.sharedWords.length - carrying.length} more shared words carry nothing: their dimensions were not kept in the vectors)`);
  }
  for (const [side, list, sum] of /** @type {const} */ ([['A', result.wordsA, result.check.wordSumA], ['B', result.wordsB, result.check.wordSumB]])) {
    if (!list) continue;
    out.push('', `words of ${side} carrying the score (sum over all ${sum?.toFixed(4)}; * = also in the other document):`);
    out.push(`  ${list.map((w) => `${w.word}${w.shared ? '*' : ''} ${signed(w.contribution)}`).join(', ')}`);
  }
  return out.join('\n') + '\n';
}
