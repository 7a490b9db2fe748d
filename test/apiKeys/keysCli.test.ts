import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticate } from '../../src/core/apiKeys/authenticate.js';
import { createDatabase } from '../../src/store/database.js';

const run = promisify(execFile);

/** Runs `npm run keys` the way an operator does (through tsx, `--liftoff-only` as the script) against a PGlite data directory. */
async function keys(
  dataDir: string | undefined,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  return keysWith({}, dataDir, ...args);
}

/** The gateway's webhook encryption key, as an operator gives it to `npm run keys`. */
const secretKey = `0x${'ab'.repeat(32)}`;
const withSecret = { GATEWAY_WEBHOOK_SECRET_KEY: secretKey };

async function keysWith(
  extraEnv: Record<string, string>,
  dataDir: string | undefined,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = {
    ...process.env,
    GATEWAY_DATA_DIR: dataDir ?? '',
    DATABASE_URL: '',
    GATEWAY_SOLVER_PRIVATE_KEY: '',
    GATEWAY_WEBHOOK_SECRET_KEY: '',
    ...extraEnv,
  };
  try {
    const { stdout, stderr } = await run('npx', ['tsx', '--liftoff-only', 'src/server/keysCli.ts', ...args], {
      env,
      cwd: path.resolve(import.meta.dirname, '../..'),
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** Whether a key authenticates against the data directory (the CLI must not be running). */
async function works(dataDir: string, key: string): Promise<boolean> {
  const database = await createDatabase({ dataDir });
  try {
    await authenticate({ db: database.db }, key);
    return true;
  } catch {
    return false;
  } finally {
    await database.close();
  }
}

describe('npm run keys', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'gateway-keys-'));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('creates, lists, rotates and revokes keys in the configured database', async () => {
    const created = await keysWith(
      withSecret,
      dataDir,
      'create',
      '--name',
      'CLI app',
      '--sponsorship',
      '--webhook',
      'https://hooks.example.com/x',
      '--requests-per-minute',
      '120',
      '--json',
    );
    expect(created.code, created.stderr).toBe(0);
    const { apiKey, key } = JSON.parse(created.stdout);
    expect(key).toMatch(/^igw_/);
    expect(apiKey).toMatchObject({
      name: 'CLI app',
      sponsorshipEnabled: true,
      limits: { requestsPerMinute: 120 },
      webhook: { url: 'https://hooks.example.com/x' },
    });

    const listed = await keys(dataDir, 'list');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(apiKey.id);
    expect(listed.stdout).not.toContain(key);
    expect(await works(dataDir, key)).toBe(true);

    const rotated = await keysWith(withSecret, dataDir, 'rotate', apiKey.id, '--json');
    expect(rotated.code, rotated.stderr).toBe(0);
    const newKey = JSON.parse(rotated.stdout).key as string;
    expect(newKey).not.toBe(key);
    expect(await works(dataDir, key)).toBe(false);
    expect(await works(dataDir, newKey)).toBe(true);

    const revoked = await keys(dataDir, 'revoke', apiKey.id);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toContain('revoked');
    expect(await works(dataDir, newKey)).toBe(false);
    expect((await keys(dataDir, 'list')).stdout).toContain('no keys');
    expect((await keys(dataDir, 'list', '--all')).stdout).toContain(apiKey.id);
  }, 120_000);

  it('refuses the data directory of a running gateway, naming its process, and changes nothing', async () => {
    // The gateway holds its directory as any process that opens it does (`createDatabase`).
    const gateway = await createDatabase({ dataDir });
    try {
      const refused = await keys(dataDir, 'create', '--name', 'while running');
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(`is in use by process ${process.pid}`);
      expect(refused.stderr).not.toContain('    at '); // a message, not a stack trace
    } finally {
      await gateway.close();
    }
    // Once the gateway stopped, the key was never made.
    expect((await keys(dataDir, 'list', '--all')).stdout).not.toContain('while running');
  });

  it('sets and shows the sponsorship allowance (micro-USD), refusing a malformed one', async () => {
    const created = await keys(
      dataDir,
      'create',
      '--name',
      'Sponsor',
      '--sponsorship',
      '--sponsorship-allowance-usd-micros',
      '2500000',
      '--json',
    );
    expect(created.code, created.stderr).toBe(0);
    const { apiKey } = JSON.parse(created.stdout);
    expect(apiKey).toMatchObject({
      sponsorshipEnabled: true,
      sponsorshipAllowanceUsdMicros: '2500000',
      sponsorshipSpentUsdMicros: '0',
      sponsorshipRemainingUsdMicros: '2500000',
    });
    const raised = await keys(dataDir, 'update', apiKey.id, '--sponsorship-allowance-usd-micros', '7000000');
    expect(raised.code, raised.stderr).toBe(0);
    expect(raised.stdout).toContain('sponsorship allowance 7000000 micro-USD, spent 0, reserved 0, remaining 7000000');
    const bad = await keys(dataDir, 'update', apiKey.id, '--sponsorship-allowance-usd-micros', '1.5');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('sponsorshipAllowanceUsdMicros');
    expect((await keys(dataDir, 'get', apiKey.id)).stdout).toContain('sponsorship allowance 7000000 micro-USD');
  }, 120_000);

  it('refuses bad input with exit status 2 and a message', async () => {
    // With the encryption key known, so the URL itself is what is refused.
    const privateHook = await keysWith(
      withSecret,
      dataDir,
      'create',
      '--name',
      'x',
      '--webhook',
      'http://127.0.0.1/hook',
    );
    expect(privateHook.code).toBe(2);
    expect(privateHook.stderr).toContain('private or loopback');
    const unknown = await keys(dataDir, 'revoke', 'key_missing');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('No API key');
    const noDatabase = await keys(undefined, 'list');
    expect(noDatabase.code).toBe(2);
    expect(noDatabase.stderr).toContain('DATABASE_URL or GATEWAY_DATA_DIR');
  }, 120_000);

  it("refuses a webhook it could never sign, and shows each key's signing state", async () => {
    // The user's shell: neither the solver key nor GATEWAY_WEBHOOK_SECRET_KEY. The webhook is refused, with
    // what to set, and no key is made.
    const refused = await keys(dataDir, 'create', '--name', 'Shop', '--webhook', 'https://hooks.example.com/shop');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('GATEWAY_WEBHOOK_SECRET_KEY');
    expect(refused.stderr).toContain('.devnet/devnet.json');

    // With the gateway's key the webhook is sealed; listings show whether it can be signed.
    const created = await keysWith(
      withSecret,
      dataDir,
      'create',
      '--name',
      'Shop',
      '--webhook',
      'https://hooks.example.com/shop',
      '--json',
    );
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout).apiKey.webhookSigning).toBe('ready');
    const id = JSON.parse(created.stdout).apiKey.id as string;
    const listed = await keys(dataDir, 'list', '--json');
    // One "Shop": the refused create made nothing.
    const shops = JSON.parse(listed.stdout).apiKeys.filter((k: { name: string }) => k.name === 'Shop');
    expect(shops).toEqual([expect.objectContaining({ id, webhookSigning: 'unchecked' })]);
    const wrongKey = await keysWith({ GATEWAY_WEBHOOK_SECRET_KEY: `0x${'cd'.repeat(32)}` }, dataDir, 'list');
    expect(wrongKey.stdout).toMatch(
      new RegExp(`${id}[^]*hooks\\.example\\.com/shop \\[NOT SIGNED: the signing secret does not open`),
    );

    // Rotating without the encryption key would leave the webhook unsigned: refused.
    const rotate = await keys(dataDir, 'rotate', id);
    expect(rotate.code).toBe(2);
    expect(rotate.stderr).toContain('would stop being signed');

    // A key made without the encryption key is said to be unsealed, and cannot get a webhook until rotated.
    const bare = await keys(dataDir, 'create', '--name', 'Bare', '--json');
    expect(bare.code).toBe(0);
    expect(bare.stderr).toContain('warning: the key is not kept sealed');
    expect(JSON.parse(bare.stdout).apiKey.webhookSigning).toBe('noSecret');
    const hook = await keysWith(
      withSecret,
      dataDir,
      'update',
      JSON.parse(bare.stdout).apiKey.id,
      '--webhook',
      'https://hooks.example.com/bare',
    );
    expect(hook.code).toBe(2);
    expect(hook.stderr).toContain('rotate the key');
  }, 600_000);
});
