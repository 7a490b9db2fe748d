/**
 * `npm start`'s temporary PGlite directory on the devnet (`src/server/devnetDataDir.ts`): made in the given parent,
 * removed by `remove()`, and removed at the process's exit when the orderly stop never ran (a second Ctrl-C, the
 * stop's time limit: `process.exit` without it). The orderly stop is `test/server/start.test.ts`.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTemporaryDataDir } from '../../src/server/devnetDataDir.js';
import { root, tsx, useChildProcesses } from '../helpers/childProcess.js';

const spawnWatched = useChildProcesses();
let parent: string;

afterAll(async () => {
  if (parent !== undefined) await rm(parent, { recursive: true, force: true });
});

describe('the devnet temporary data directory', () => {
  it('is a new directory, and remove() removes it (twice is harmless)', async () => {
    parent = await mkdtemp(path.join(tmpdir(), 'gateway-datadir-test-'));
    const dir = createTemporaryDataDir(parent);
    expect(path.dirname(dir.path)).toBe(parent);
    expect(path.basename(dir.path)).toMatch(/^gateway-devnet-/);
    await writeFile(path.join(dir.path, 'PG_VERSION'), '17');
    dir.remove();
    dir.remove();
    expect(existsSync(dir.path)).toBe(false);
  });

  it('is removed when the process exits without the orderly stop', async () => {
    parent ??= await mkdtemp(path.join(tmpdir(), 'gateway-datadir-test-'));
    const script = path.join(parent, 'exit.ts');
    const module = path.join(root, 'src/server/devnetDataDir.ts');
    await writeFile(
      script,
      `import { writeFileSync } from 'node:fs';
import { createTemporaryDataDir } from ${JSON.stringify(module)};
const dir = createTemporaryDataDir(${JSON.stringify(parent)});
writeFileSync(dir.path + '/PG_VERSION', '17');
console.log('made ' + dir.path);
process.exit(130);
`,
    );
    const run = spawnWatched(process.execPath, [tsx, script]);
    const [, made] = await run.waitFor(/made (\S+)/, 30_000);
    expect(await run.exited).toBe(130);
    expect(existsSync(made!)).toBe(false);
    expect((await readdir(parent)).filter((name) => name.startsWith('gateway-devnet-'))).toEqual([]);
  });
});
