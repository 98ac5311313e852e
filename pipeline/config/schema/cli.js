// Defaults of `scdv` flags that are not config keys (CLI_DEFAULTS; each command's --help shows them)
// (conventions: ./section.js).
import { section } from './section.js';

export const cli = section('Defaults of command-line flags that are not config keys.', {
  modelName: { type: 'string', default: 'default', description: 'scdv train --name.' },
  collection: { type: 'string', default: 'articles', description: '--collection of scdv index, precompute, explain, inspect doc.' },
  labelField: { type: 'string', default: 'category', description: "scdv eval --label-field: the corpus field holding each document's label." },
  clusterSort: { type: 'string', enum: ['cluster', 'coherence', 'size'], default: 'cluster', description: 'scdv inspect clusters --sort.' },
  clusterWords: { type: 'integer', minimum: 1, default: 8, description: 'scdv inspect clusters --words: top words shown per cluster (all of them with --cluster).' },
  opensearchPort: { type: 'integer', minimum: 1, maximum: 65535, default: 9200, description: "scdv opensearch start --port (OpenSearch's own default HTTP port)." },
  opensearchHeapMb: { type: 'integer', minimum: 1, default: 1024, description: 'scdv opensearch start --heap-mb: the JVM heap of the local node (tests use 512).' },
});
