/**
 * Issue #20 item 7: documentation that drifted from the code. The README's configuration table lists exactly the
 * environment variables the code reads (found by reading the source, so a new variable without a row, or a row
 * for a variable nobody reads, fails here); the AsyncAPI server is the gateway's default address; and the
 * OpenAPI quote and price bodies describe every option the core refuses as not supported.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { unsupportedQuoteOptions } from '../../src/core/quote/types.js';
import { configFromEnvironment } from '../../src/server/config.js';

const root = new URL('../../', import.meta.url).pathname;

/** Read by the code but deliberately not in the README table, with the reason. */
const NOT_IN_README: Record<string, string> = {
  GATEWAY_CRASH_AT: 'test-only fault injection (SIGKILL at a named step), documented in docs/configuration.md',
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|mjs)$/.test(name) ? [path] : [];
  });
}

/**
 * Every environment variable `src/` reads: `env.X`, `env?.X`, `env['X']` (any object called `env`, including
 * `process.env`), and a quoted `'GATEWAY_…'` / `'DEVNET_…'` literal, which is how the config parsers pass a name
 * to their helpers (`integer('GATEWAY_WEBHOOK_TIMEOUT_MS', …)`, `parseBoolean(env, 'GATEWAY_TRUST_PROXY', …)`).
 */
export function variablesReadByCode(): Set<string> {
  const found = new Set<string>();
  const patterns = [
    /\benv\??\.([A-Z][A-Z0-9_]*)\b/g,
    /\benv\[\s*['"]([A-Z][A-Z0-9_]*)['"]\s*\]/g,
    /['"]((?:GATEWAY|DEVNET)_[A-Z0-9_]+)['"]/g,
  ];
  for (const file of sourceFiles(join(root, 'src'))) {
    const text = readFileSync(file, 'utf8');
    for (const pattern of patterns) for (const match of text.matchAll(pattern)) found.add(match[1]!);
  }
  return found;
}

/** The variables named in the first column of the README's "Configuration" table. */
export function variablesInReadme(): Set<string> {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = readme.split(/^## Configuration$/m)[1]?.split(/^## /m)[0];
  if (section === undefined) throw new Error('README.md has no "## Configuration" section');
  const names = new Set<string>();
  for (const line of section.split('\n')) {
    if (!line.startsWith('| `')) continue;
    const firstCell = line.split('|')[1]!;
    for (const match of firstCell.matchAll(/`([A-Z][A-Z0-9_]*)`/g)) names.add(match[1]!);
  }
  return names;
}

describe('README configuration table', () => {
  it('has a row for every environment variable the code reads', () => {
    const readme = variablesInReadme();
    const missing = [...variablesReadByCode()].filter((name) => !readme.has(name) && !(name in NOT_IN_README)).sort();
    expect(missing, 'add a row to the README configuration table for each').toEqual([]);
  });

  it('has no row for a variable the code does not read', () => {
    const code = variablesReadByCode();
    const stale = [...variablesInReadme()].filter((name) => !code.has(name)).sort();
    expect(stale).toEqual([]);
  });

  it('finds the variables read through helpers and process.env (the scan itself works)', () => {
    const code = variablesReadByCode();
    for (const name of [
      'PORT',
      'HOST',
      'DATABASE_URL',
      'GATEWAY_SOLVER',
      'GATEWAY_GRAPHIQL',
      'GATEWAY_TRUST_PROXY',
      'GATEWAY_WEBHOOK_TIMEOUT_MS',
      'DEVNET_BASE_PORT',
    ]) {
      expect(code.has(name), name).toBe(true);
    }
  });
});

describe('API documents', () => {
  it('AsyncAPI names the gateway default address as its server', () => {
    const asyncapi = parse(readFileSync(join(root, 'schema/asyncapi.yaml'), 'utf8'));
    const config = configFromEnvironment({}, [], `0x${'11'.repeat(32)}`);
    expect(asyncapi.servers.gateway.host).toBe(`${config.host}:${config.port}`);
  });

  it('OpenAPI describes every quote option the gateway refuses as not supported', () => {
    const openapi = parse(readFileSync(join(root, 'schema/openapi.yaml'), 'utf8'));
    for (const schema of ['QuoteRequest', 'PriceRequest']) {
      const properties = openapi.components.schemas[schema].properties as Record<string, { description?: string }>;
      for (const option of unsupportedQuoteOptions) {
        if (properties[option] === undefined) continue;
        expect(properties[option].description ?? '', `${schema}.${option}`).toMatch(
          /^Not supported by this gateway yet/,
        );
      }
    }
    expect(openapi.paths['/quote/v2'].post.description).not.toMatch(/signature steps when\s+`usePermit` is set/);
  });
});
