// The backend contract (tests/store/contract.js) on the native store, opened as every caller opens it.
import fs from 'node:fs';
import { usePaths } from '../../pipeline/paths.js';
import { openModelStore } from '../../pipeline/store/index.js';
import { DEFAULT_CONFIG } from '../../pipeline/config.js';
import { contractTests } from './contract.js';
import { tempDir } from './helpers.js';

contractTests(async () => {
  const dir = tempDir('contract');
  usePaths({ storeDir: `${dir}/store`, modelsDir: `${dir}/models` });
  return {
    name: 'native',
    // layouts of the native store live in models/<name>/indexed.json
    open: async (model) => {
      fs.mkdirSync(`${dir}/models/${model}`, { recursive: true });
      return openModelStore(model, { store: DEFAULT_CONFIG.store });
    },
    stop: async () => { fs.rmSync(dir, { recursive: true, force: true }); },
  };
});
