// Optional step: OpenSearch for the `opensearch` store backend, installed only when asked (`npm run setup --
// --opensearch`, SCDV_SETUP_OPENSEARCH=1, or a config with store.backend "opensearch"); `npm start` and `npm test`
// never install it. The integ-test-zip distribution is a Maven Central artifact: fetched over HTTPS (or taken from
// a local Maven repository) and checked against its .sha1, unpacked into the cache atomically, with modules that
// zip lacks and the store needs added: lang-painless (the scripting language of the exact re-ranking and of the
// candidates' similarity: search.js) with its dependencies, and analysis-common (the `whitespace` tokenizer and
// `delimited_term_freq` filter of the feature field, encoding.js). An install made before analysis-common was
// added gets it in place. Its Java is a system package (openjdk-17-jre-headless, OPENSEARCH_PACKAGES in
// pipeline/setup/system-packages.js).
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { OPENSEARCH_VERSION, opensearchHome } from '../../paths.js';

/**
 * A failed install, its message meant for the user (set-up prints it without a stack trace, as its own SetupError).
 * Its own class, not set-up's: set-up imports this file, so this file imports nothing of set-up's.
 */
export class InstallError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = 'InstallError';
  }
}

const MAVEN_CENTRAL = 'https://repo1.maven.org/maven2';
/** @typedef {{group: string, artifact: string, version: string, file: string}} Artifact Maven coordinates (group path) and file name */
/** @param {string} group @param {string} artifact @param {string} version @returns {Artifact} */
const jar = (group, artifact, version) => ({ group, artifact, version, file: `${artifact}-${version}.jar` });
/** The artifacts, as Maven coordinates. */
export const ARTIFACTS = {
  distribution: { group: 'org/opensearch/distribution/integ-test-zip', artifact: 'opensearch', version: OPENSEARCH_VERSION, file: `opensearch-${OPENSEARCH_VERSION}.zip` },
  analysisCommon: jar('org/opensearch/plugin', 'analysis-common', OPENSEARCH_VERSION),
  /** lang-painless and what it needs at run time (the dependencies its own distribution module ships). */
  painless: [
    jar('org/opensearch/plugin', 'lang-painless', OPENSEARCH_VERSION),
    jar('org/opensearch/plugin', 'opensearch-scripting-painless-spi', OPENSEARCH_VERSION),
    jar('org/antlr', 'antlr4-runtime', '4.13.1'),
    ...['asm', 'asm-commons', 'asm-tree', 'asm-analysis', 'asm-util'].map((a) => jar('org/ow2/asm', a, '9.7')),
  ],
};
/**
 * A module's plugin-descriptor.properties, as OpenSearch's own distribution writes it.
 * @param {string} description @param {string} name @param {string} classname @param {string} [extended] plugins it extends
 */
const pluginDescriptor = (description, name, classname, extended = '') => `description=${description}
version=${OPENSEARCH_VERSION}
name=${name}
classname=${classname}
java.version=11
opensearch.version=${OPENSEARCH_VERSION}
custom.foldername=
extended.plugins=${extended}
has.native.controller=false
`;
const PAINLESS_DESCRIPTOR = pluginDescriptor('An easy, safe and fast scripting language for OpenSearch', 'lang-painless', 'org.opensearch.painless.PainlessPlugin');
const ANALYSIS_COMMON_DESCRIPTOR = pluginDescriptor('Adds "built in" analyzers to OpenSearch.', 'analysis-common', 'org.opensearch.analysis.common.CommonAnalysisPlugin', 'lang-painless');
/** Painless compiles scripts into classes of their own loader. */
const PAINLESS_POLICY = `grant {
  permission java.lang.RuntimePermission "createClassLoader";
  permission java.lang.RuntimePermission "getClassLoader";
};
`;
/** The file whose presence says the install is complete (written last of the modules). */
export const INSTALL_MARK = path.join('modules', 'analysis-common', 'plugin-descriptor.properties');
/** The mark of an install made before analysis-common was added: that module is added to it in place. */
const PAINLESS_MARK = path.join('modules', 'lang-painless', 'plugin-descriptor.properties');

/**
 * Whether this run of set-up should install OpenSearch.
 * @param {string[]} argv set-up's arguments
 * @param {NodeJS.ProcessEnv} env
 * @returns {string | null} why (for the log), or null
 */
export function openSearchWanted(argv, env) {
  if (argv.includes('--opensearch')) return 'asked with --opensearch';
  if (env.SCDV_SETUP_OPENSEARCH === '1') return 'SCDV_SETUP_OPENSEARCH=1';
  if (env.SCDV_STORE_BACKEND === 'opensearch') return 'SCDV_STORE_BACKEND=opensearch';
  // The config file the commands will be given: read cheaply (no node_modules yet, no validation: that is the
  // commands' job); an unreadable file is left for them to report.
  const i = argv.indexOf('--config');
  const file = i >= 0 ? argv[i + 1] : argv.find((a) => a.startsWith('--config='))?.slice('--config='.length);
  if (file) {
    try {
      const cfg = JSON.parse(fs.readFileSync(file, 'utf8'));
      if (cfg?.store?.backend === 'opensearch') return `${file} has store.backend "opensearch"`;
    } catch { /* reported by the command that loads it */ }
  }
  return null;
}

/**
 * GET over HTTPS into a file (following redirects).
 * @param {string} url
 * @param {string} dest
 * @returns {Promise<void>}
 */
function download(url, dest) {
  return new Promise((resolve, reject) => {
    const req = https.get(url, { timeout: 60_000 }, (res) => {
      if (res.statusCode && res.statusCode >= 300 && res.statusCode < 400 && res.headers.location) {
        res.resume();
        download(new URL(res.headers.location, url).toString(), dest).then(resolve, reject);
        return;
      }
      if (res.statusCode !== 200) {
        res.resume();
        reject(new InstallError(`GET ${url} answered ${res.statusCode}`));
        return;
      }
      const out = fs.createWriteStream(dest);
      res.pipe(out);
      out.on('finish', () => resolve());
      out.on('error', reject);
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new InstallError(`GET ${url}: no data for 60 s`)));
    req.on('error', (err) => reject(err instanceof InstallError ? err : new InstallError(`GET ${url}: ${err.message}`)));
  });
}

/**
 * Unpack a zip (the system's unzip: an OpenSearch package, OPENSEARCH_PACKAGES in pipeline/setup/system-packages.js).
 * @param {string} zip
 * @param {string} dir
 */
function unzip(zip, dir) {
  const res = spawnSync('unzip', ['-q', zip, '-d', dir], { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (res.error) throw new InstallError(`unzip -q ${zip} -d ${dir}: ${res.error.message}`);
  if (res.status !== 0) throw new InstallError(`\`unzip -q ${zip} -d ${dir}\` exited with ${res.status ?? res.signal}\n${`${res.stderr}\n${res.stdout}`.trim()}`);
}

/** @param {string} file */
function sha1(file) {
  return crypto.createHash('sha1').update(fs.readFileSync(file)).digest('hex');
}

/**
 * One artifact into `dir`, checked against Maven Central's .sha1: from the local Maven repository when it holds
 * the same file, else downloaded.
 * @param {Artifact} a
 * @param {string} dir
 * @param {(msg: string) => void} log
 * @returns {Promise<string>} the file
 */
async function fetchArtifact(a, dir, log) {
  const rel = `${a.group}/${a.artifact}/${a.version}/${a.file}`;
  const dest = path.join(dir, a.file);
  await download(`${MAVEN_CENTRAL}/${rel}.sha1`, `${dest}.sha1`);
  const expected = fs.readFileSync(`${dest}.sha1`, 'utf8').trim().split(/\s+/)[0];
  const local = path.join(os.homedir(), '.m2', 'repository', rel);
  if (fs.existsSync(local) && sha1(local) === expected) {
    fs.copyFileSync(local, dest);
    log(`opensearch: ${a.file} from the local Maven repository (${formatBytes(fs.statSync(dest).size)}, sha1 checked)`);
    return dest;
  }
  const t0 = Date.now();
  await download(`${MAVEN_CENTRAL}/${rel}`, dest);
  const got = sha1(dest);
  if (got !== expected) throw new InstallError(`${MAVEN_CENTRAL}/${rel}: sha1 ${got}, Maven Central says ${expected}; try again`);
  log(`opensearch: downloaded ${a.file} (${formatBytes(fs.statSync(dest).size)} in ${((Date.now() - t0) / 1000).toFixed(1)} s, sha1 checked)`);
  return dest;
}

/** @param {number} n */
function formatBytes(n) {
  return n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(0)} MB` : `${Math.max(1, Math.round(n / 1024))} KB`;
}

/**
 * Install OpenSearch into the cache unless it is there already.
 * @param {(msg: string) => void} log
 * @param {{home?: string}} [opts] `home` replaces opensearchHome() (tests)
 * @returns {Promise<string>} the install folder
 */
export async function ensureOpenSearch(log, opts = {}) {
  const home = opts.home ?? opensearchHome();
  if (fs.existsSync(path.join(home, INSTALL_MARK))) {
    log(`opensearch: ${OPENSEARCH_VERSION} is installed at ${home}`);
    return home;
  }
  if (fs.existsSync(path.join(home, PAINLESS_MARK))) {
    log(`opensearch: adding the analysis-common module (the feature field's analyzer, 200 KB) to ${home}`);
    const work = path.join(home, 'modules', `.analysis-common.tmp-${process.pid}`);
    fs.rmSync(work, { recursive: true, force: true });
    fs.mkdirSync(work);
    try {
      await addAnalysisCommon(work, work, log);
      fs.rmSync(path.join(home, 'modules', 'analysis-common'), { recursive: true, force: true });
      fs.renameSync(work, path.join(home, 'modules', 'analysis-common'));
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
    return home;
  }
  log(`opensearch: installing ${OPENSEARCH_VERSION} into ${home}: the integ-test-zip distribution (about 55 MB ` +
    'unpacked), the lang-painless module (about 2 MB) and the analysis-common module (200 KB) from Maven Central');
  fs.mkdirSync(path.dirname(home), { recursive: true });
  const work = `${home}.tmp-${process.pid}`;
  fs.rmSync(work, { recursive: true, force: true });
  fs.mkdirSync(work);
  try {
    const zip = await fetchArtifact(ARTIFACTS.distribution, work, log);
    const painless = [];
    for (const a of ARTIFACTS.painless) painless.push(await fetchArtifact(a, work, log));
    unzip(zip, path.join(work, 'unpacked'));
    const top = path.join(work, 'unpacked', `opensearch-${OPENSEARCH_VERSION}`);
    if (!fs.existsSync(path.join(top, 'bin', 'opensearch'))) throw new InstallError(`${zip} does not hold opensearch-${OPENSEARCH_VERSION}/bin/opensearch`);
    const lang = path.join(top, 'modules', 'lang-painless');
    fs.mkdirSync(lang, { recursive: true });
    for (const f of painless) fs.copyFileSync(f, path.join(lang, path.basename(f)));
    fs.writeFileSync(path.join(lang, 'plugin-security.policy'), PAINLESS_POLICY);
    fs.writeFileSync(path.join(top, PAINLESS_MARK), PAINLESS_DESCRIPTOR);
    const analysis = path.join(top, 'modules', 'analysis-common');
    fs.mkdirSync(analysis, { recursive: true });
    await addAnalysisCommon(work, analysis, log);
    fs.rmSync(home, { recursive: true, force: true });
    fs.renameSync(top, home);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  log(`opensearch: installed at ${home}; \`npm run opensearch\` starts a local node`);
  return home;
}

/**
 * The analysis-common module into `dir`, its descriptor (the install's mark) written last.
 * @param {string} work where the download goes
 * @param {string} dir the module's folder
 * @param {(msg: string) => void} log
 */
async function addAnalysisCommon(work, dir, log) {
  const file = await fetchArtifact(ARTIFACTS.analysisCommon, work, log);
  if (path.dirname(file) !== dir) fs.copyFileSync(file, path.join(dir, path.basename(file)));
  fs.rmSync(`${path.join(dir, path.basename(file))}.sha1`, { force: true });
  fs.writeFileSync(path.join(dir, 'plugin-descriptor.properties'), ANALYSIS_COMMON_DESCRIPTOR);
}
