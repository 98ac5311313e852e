// Compile a user dictionary (MeCab CSV in the IPA layout, UTF-8) into a .dic for `tokenizer.userDictionaries`.
// It must be compiled against the definitions of the system dictionary it will be used with: both neologd and
// ipadic share ipadic's part-of-speech ids and connection matrix, so Debian's ipadic sources serve for both.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { IPADIC_SOURCE_DIR } from '../paths.js';
import { errors } from '../errors.js';

/** Fields of a MeCab CSV line in the IPA layout. */
const IPA_FIELDS = 13;

/**
 * Check the CSV before MeCab sees it, so that errors name the line.
 * @param {string} text
 */
function validateCsv(text) {
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    const fields = line.split(',');
    if (fields.length < IPA_FIELDS) {
      throw errors.USER_DICTIONARY_INVALID(i + 1, `${fields.length} fields, need ${IPA_FIELDS}: surface,left-id,right-id,cost,pos1..pos6,base,reading,pronunciation`);
    }
    for (const [k, name] of [[1, 'left id'], [2, 'right id'], [3, 'cost']]) {
      if (!/^-?\d+$/.test(fields[/** @type {number} */ (k)])) throw errors.USER_DICTIONARY_INVALID(i + 1, `${name} "${fields[/** @type {number} */ (k)]}" is not an integer (leave ids empty? use 1285,1285 for a general noun)`);
    }
  });
}

/**
 * @param {string} csvFile UTF-8 CSV
 * @param {string} outFile the .dic to write
 * @returns {{entries: number}}
 */
export function compileUserDictionary(csvFile, outFile) {
  let text;
  try {
    text = fs.readFileSync(csvFile, 'utf8');
  } catch (err) {
    throw errors.USER_DICTIONARY_INVALID(0, `cannot read ${csvFile}: ${/** @type {Error} */ (err).message}`).because(err);
  }
  validateCsv(text);
  // mecab-dict-index reads the definition files and the CSV in one charset: convert the definitions
  // (EUC-JP in Debian's package) to UTF-8 in a scratch folder.
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-userdic-'));
  try {
    const decoder = new TextDecoder('euc-jp');
    for (const name of fs.readdirSync(IPADIC_SOURCE_DIR)) {
      if (!name.endsWith('.def') && name !== 'dicrc') continue;
      let body = decoder.decode(fs.readFileSync(path.join(IPADIC_SOURCE_DIR, name)));
      if (name === 'dicrc') body = body.replace(/^config-charset\s*=.*$/m, 'config-charset = UTF-8');
      fs.writeFileSync(path.join(work, name), body);
    }
    const libexec = spawnSync('mecab-config', ['--libexecdir'], { encoding: 'utf8' }).stdout.trim() || '/usr/lib/mecab';
    const tmpOut = `${outFile}.tmp-${process.pid}`;
    const res = spawnSync(path.join(libexec, 'mecab-dict-index'),
      ['-d', work, '-u', tmpOut, '-f', 'UTF-8', '-t', 'UTF-8', path.resolve(csvFile)], { encoding: 'utf8' });
    if (res.status !== 0) {
      fs.rmSync(tmpOut, { force: true });
      throw errors.USER_DICTIONARY_INVALID(0, `mecab-dict-index failed: ${(res.stderr || res.stdout || String(res.error)).trim()}`);
    }
    fs.renameSync(tmpOut, outFile);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  return { entries: text.split('\n').filter((l) => l.trim() !== '').length };
}
