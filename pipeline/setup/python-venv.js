// Step 3: the Python virtual environment for the training workers, from pinned requirements.
import fs from 'node:fs';
import path from 'node:path';
import { PYTHON_REQUIREMENTS, VENV_DIR, VENV_PYTHON } from '../paths.js';
import { hashFile, readStamp, run } from './run.js';

/**
 * Create .venv and install workers/requirements.txt when it changed since the last install.
 * @param {(msg: string) => void} log
 */
export function ensurePythonVenv(log) {
  const stamp = path.join(VENV_DIR, '.scdv-requirements.sha256');
  const want = hashFile(PYTHON_REQUIREMENTS);
  if (fs.existsSync(VENV_PYTHON) && readStamp(stamp) === want) {
    log('python venv: up to date');
    return;
  }
  if (!fs.existsSync(VENV_PYTHON)) {
    log('python venv: creating .venv');
    run('python3', ['-m', 'venv', VENV_DIR]);
  }
  log('python venv: installing workers/requirements.txt (about 20 s)');
  run(VENV_PYTHON, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '-r', PYTHON_REQUIREMENTS]);
  fs.writeFileSync(stamp, want + '\n');
}
