// Creates a new PGlite database (PostgreSQL's initdb) in a data directory, in a process of its own: started by
// `createPGliteProxy` (pgliteProxy.ts), which says why. Plain JavaScript, run by node itself as `pgliteWorker.mjs`
// is.
//
//   node pgliteInitialize.mjs <dataDir>
//
// Exit code 0 once the database is there; on failure, exit code 1 and the error (`serializeError`) as the last
// line of stderr after `FAILED `.
import { PGlite } from '@electric-sql/pglite';
import { serializeError } from './pgliteErrors.mjs';

try {
  const pglite = await PGlite.create({ dataDir: process.argv[2] });
  await pglite.close();
} catch (error) {
  process.stderr.write(`\nFAILED ${JSON.stringify(serializeError(error))}\n`);
  process.exitCode = 1;
}
