// A writer for log.test.js: appends numbered batches to the event log in --dir and prints the last acknowledged
// sequence number after each acknowledgement, until killed.
import { EventLog } from '../../pipeline/events/log.js';
import { DEFAULT_CONFIG } from '../../pipeline/config.js';

const dir = process.argv[2];
const log = new EventLog({ ...DEFAULT_CONFIG.events, dir, fsync: /** @type {'always'|'never'} */ (process.argv[3] ?? 'always'), segmentBytes: 200_000 });
let seq = 0;
const inFlight = 4;
await Promise.all(Array.from({ length: inFlight }, async () => {
  for (;;) {
    const batch = Array.from({ length: 50 }, () => ({ type: 'click', id: String(++seq), page_id: 'p', clicked_id: 'x' }));
    await log.append(batch);
    process.stdout.write(`${batch.map((e) => e.id).join(',')}\n`);
  }
}));
