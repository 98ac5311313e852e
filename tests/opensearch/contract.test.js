// The backend contract (tests/store/contract.js) on a real OpenSearch: a node started by the harness, or the
// cluster at SCDV_TEST_OPENSEARCH_URL (a development node; this suite's indices have their own prefix and are
// deleted at the end).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { usePaths } from '../../pipeline/paths.js';
import { loadConfig } from '../../pipeline/config.js';
import { openModelStore } from '../../pipeline/store/index.js';
import { contractTests } from '../store/contract.js';
import { testOpenSearch } from '../lib/opensearch.js';

contractTests(async () => {
  const node = await testOpenSearch('ct');
  const { url, prefix } = node;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-os-contract-'));
  // Nothing may land in a local folder: the native store's and the layouts' folders are empty temporaries.
  usePaths({ storeDir: path.join(dir, 'store'), modelsDir: path.join(dir, 'models') });
  const config = loadConfig({ overrides: { store: { backend: 'opensearch', opensearch: { nodes: [url], indexPrefix: prefix, replicas: 0 } } } });
  return {
    name: 'opensearch',
    open: (model) => openModelStore(model, config),
    stop: async () => {
      await node.stop();
      assertNothingLocal(dir);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
});

/** @param {string} dir */
function assertNothingLocal(dir) {
  const left = fs.readdirSync(dir);
  if (left.length) throw new Error(`the OpenSearch backend wrote local files: ${left.join(', ')}`);
}
