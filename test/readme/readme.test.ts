/**
 * The README cannot rot: every fenced block in it is marked, either with the file name it is run as or with why it
 * is not run and the test file that runs it (a fragment of a flow, or a command that starts a gateway of its own),
 * and this test runs each named one, unchanged except for the addresses, against a real devnet gateway: the
 * gateway started with the environment the README gives `npm start`, the tour's curls, the first deposit with
 * viem, following it over /ws, the webhook key and a receiver that checks signatures, and the reference's SDK.
 * The commands of the blocks it does not run are checked to be the package's scripts.
 *
 * The snippets run as a user runs them: written to a directory of their own (with `"type": "module"` and the
 * devnet's `.devnet/devnet.json`), with `bash` or `tsx`. The gateway listens on a free port, so
 * `http://127.0.0.1:4000` becomes its URL and the receiver's port 8080 a free one; nothing else changes.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeDevnetDescriptor } from '../../src/chain/devnet.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import vitestConfig from '../../vitest.config.js';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
const tsx = path.join(root, 'node_modules/.bin/tsx');

interface Snippet {
  /** The file it runs as, or undefined when it is marked not to run. */
  name: string | undefined;
  /** Why it is not run. */
  skip: string | undefined;
  language: string;
  code: string;
}

/** Every fenced block of the README with the marker comment right above it (undefined name and skip: none). */
function snippetsOf(readme: string): Snippet[] {
  const snippets: Snippet[] = [];
  const fence = /^```(\w*)\n([\s\S]*?)^```$/gm;
  for (let match = fence.exec(readme); match !== null; match = fence.exec(readme)) {
    const before = readme.slice(0, match.index).trimEnd().split('\n').at(-1) ?? '';
    const marker = /^<!-- snippet: (.+) -->$/.exec(before)?.[1];
    const skip = marker?.startsWith('skip') ? marker.replace(/^skip,?\s*/, '') : undefined;
    snippets.push({
      name: marker !== undefined && skip === undefined ? marker : undefined,
      skip,
      language: match[1]!,
      code: match[2]!,
    });
  }
  return snippets;
}

let gateway: TestGateway;
let dir: string;
let receiverPort: number;
let snippets: Snippet[];
const children: ChildProcess[] = [];

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

/**
 * The environment a `VAR=value … npm start` block starts the gateway with: the test's gateway is that `npm start`
 * (on a devnet of free ports), configured from the same variables.
 */
function startEnvironment(name: string): Record<string, string> {
  const code = snippets.find((s) => s.name === name)?.code.trim() ?? '';
  const match = /^((?:[A-Z_]+=\S+ )+)npm start$/.exec(code);
  if (match === null) throw new Error(`README snippet ${name} is not \`VAR=value npm start\`: ${code}`);
  return Object.fromEntries(
    match[1]!
      .trim()
      .split(/\s+/)
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );
}

beforeAll(async () => {
  snippets = snippetsOf(await readFile(path.join(root, 'README.md'), 'utf8'));
  gateway = await startTestGateway({}, { environment: startEnvironment('start-admin.sh') });
  receiverPort = await freePort();
  // Under node_modules so that `viem`, `ws` and the SDK resolve as they would in an app that installed them.
  dir = path.join(root, 'node_modules/.cache', `readme-snippets-${randomBytes(4).toString('hex')}`);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  await writeDevnetDescriptor(path.join(dir, '.devnet/devnet.json'), gateway.devnet.descriptor);
}, 400_000);

afterAll(async () => {
  for (const child of children) child.kill();
  await gateway?.stop();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

/** The snippet's code with the gateway's and the receiver's real addresses. */
function localise(code: string): string {
  const url = new URL(gateway.url);
  return code
    .replaceAll('http://127.0.0.1:4000', gateway.url)
    .replaceAll('ws://127.0.0.1:4000', `ws://${url.host}`)
    .replaceAll('127.0.0.1:8080', `127.0.0.1:${receiverPort}`)
    .replaceAll('.listen(8080,', `.listen(${receiverPort},`);
}

async function write(name: string): Promise<string> {
  const snippet = snippets.find((s) => s.name === name);
  if (snippet === undefined) throw new Error(`README has no snippet named ${name}`);
  const file = path.join(dir, name);
  await writeFile(file, localise(snippet.code));
  return file;
}

/** Runs a named snippet to its end; fails the test on a non-zero exit, with its output. */
async function runSnippet(name: string, args: string[] = [], env: Record<string, string> = {}): Promise<string> {
  const file = await write(name);
  const options = { cwd: dir, env: { ...process.env, ...env }, timeout: 240_000 };
  try {
    const { stdout } = name.endsWith('.sh')
      ? // `open` stands in for the browser: the page must be served.
        await run(
          'bash',
          ['-euo', 'pipefail', '-c', `open() { curl -sf "$1" > /dev/null; }\n${await readFile(file, 'utf8')}`],
          options,
        )
      : await run(tsx, [file, ...args], options);
    return stdout;
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`README snippet ${name} failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`, {
      cause: error,
    });
  }
}

describe('README', () => {
  it('marks every block: run as a named file, or skipped with a reason naming the test that runs it', () => {
    expect(snippets.length).toBeGreaterThan(10);
    for (const snippet of snippets) {
      expect(snippet.name ?? snippet.skip, `unmarked block:\n${snippet.code.slice(0, 200)}`).toBeTruthy();
      if (snippet.skip === undefined) continue;
      const tests = [...snippet.skip.matchAll(/\btest\/[\w/.-]+\.test\.ts\b/g)].map(([file]) => file);
      expect(tests.length, `a skip reason names no test: ${snippet.skip}`).toBeGreaterThan(0);
      for (const file of tests) expect(existsSync(path.join(root, file)), file).toBe(true);
    }
    const names = snippets.flatMap((s) => (s.name === undefined ? [] : [s.name]));
    expect(new Set(names).size).toBe(names.length);
    expect(names.sort()).toEqual(
      [
        'create-key.sh',
        'error.sh',
        'first-deposit.ts',
        'follow.ts',
        'quote.sh',
        'receiver.ts',
        'sdk.ts',
        'start-admin.sh',
        'tour.sh',
      ].sort(),
    );
  });

  it("the commands of every shell block are the package's scripts, and the suite includes this test", async () => {
    const { scripts } = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    const commands = snippets
      .filter((s) => s.language === 'sh')
      .flatMap((s) => [...s.code.matchAll(/\bnpm (start|test|run ([\w:]+))/g)].map((m) => m[2] ?? m[1]!));
    expect(new Set(commands)).toEqual(
      new Set(['start', 'test', 'bench', 'bench:fill', 'bench:stream', 'bench:idle', 'bench:growth', 'bench:soak']),
    );
    for (const command of commands) {
      const script = scripts[command];
      expect(script, `npm ${command}`).toBeDefined();
      // A script that runs a file (`tsx [flags] <file>`): the file is there.
      const file = /^tsx (?:--[\w-]+ )*(\S+\.ts)\b/.exec(script!)?.[1];
      if (file !== undefined) expect(existsSync(path.join(root, file)), `${command}: ${file}`).toBe(true);
    }
    // `npm start` is what test/server/start.test.ts runs; `npm test` runs every test file, this one included.
    expect(scripts.start).toMatch(/^tsx (--[\w-]+ )*src\/server\/main\.ts$/);
    expect(scripts.test).toBe('vitest run');
    expect(vitestConfig.test?.include).toContain('test/**/*.test.ts');
  });

  it('the tour, the quote and the error example answer as the README says', async () => {
    const tour = await runSnippet('tour.sh');
    expect(tour).toContain('{"status":"ready"');
    expect(tour).toContain('"serviceReceiver"');
    const quote = await runSnippet('quote.sh');
    expect(quote).toContain('"id":"deposit"');
    expect(quote).toContain('"requestId":"0x');
    const error = await runSnippet('error.sh');
    expect(error).toContain('"errorCode":"INVALID_INPUT"');
    expect(error).toContain("amounts are integers in the currency's smallest unit");
  }, 600_000);

  it("your first deposit: viem, /ws, a signed webhook to the README's receiver, and the SDK", async () => {
    const created = JSON.parse(await runSnippet('create-key.sh')) as {
      apiKey: { webhookSigning: string; webhook: { url: string } };
      key: string;
    };
    expect(created.apiKey.webhookSigning).toBe('ready');
    expect(created.apiKey.webhook.url).toBe(`http://127.0.0.1:${receiverPort}/hook`);

    // The receiver runs until stopped, printing each verified event.
    const receiverFile = await write('receiver.ts');
    const receiver = spawn(tsx, [receiverFile], { cwd: dir, env: { ...process.env, API_KEY: created.key } });
    children.push(receiver);
    let received = '';
    receiver.stdout.on('data', (chunk: Buffer) => (received += chunk.toString()));
    receiver.stderr.on('data', (chunk: Buffer) => (received += chunk.toString()));
    // Ready once it answers (a request without a signature is refused, and says so).
    await expect
      .poll(
        async () =>
          fetch(`http://127.0.0.1:${receiverPort}/hook`, { method: 'POST', body: '{}' }).then(
            (r) => r.status,
            () => 0,
          ),
        { timeout: 120_000, interval: 500 },
      )
      .toBe(401);
    await expect.poll(() => received, { timeout: 10_000 }).toContain('bad signature: ignored');

    const deposit = await runSnippet('first-deposit.ts', [], { API_KEY: created.key });
    expect(deposit).toMatch(/^deposit: 0x[0-9a-f]{64}$/m);
    const requestId = /^requestId: (0x[0-9a-f]{64})$/m.exec(deposit)![1]!;
    expect(deposit.trimEnd().split('\n').at(-1)).toMatch(/^success 0x[0-9a-f]{64}$/);

    const followed = await runSnippet('follow.ts', [requestId]);
    expect(followed).toMatch(/^success 0x[0-9a-f]{64}$/m);

    await expect
      .poll(() => received, { timeout: 60_000, interval: 200 })
      .toContain(`request.status.updated ${requestId} success`);
    expect(received).not.toMatch(/bad signature[^]*bad signature/); // only the probe above was refused

    const sdk = await runSnippet('sdk.ts');
    expect(sdk).toMatch(/^success \[\{.*"chainId":31338/m);
  }, 900_000);
});
