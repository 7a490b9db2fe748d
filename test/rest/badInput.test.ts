/**
 * Bad input to every operation of the contract gets a 4xx in the reference's error shape and never a 500:
 * malformed JSON, bodies of the wrong type, missing and unknown fields, wrong field types, oversized bodies,
 * wrong content types, and missing or mistyped query parameters. The cases are derived from the operation
 * table, so an operation added to the contract is covered without touching this file.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatePrivateKey } from 'viem/accounts';
import { components, operations, type OperationId } from '../../generated/openapi/operations.js';
import { configFromEnvironment } from '../../src/server/config.js';
import { createServer, type GatewayServer } from '../../src/server/createServer.js';
import { makeChainConfig } from '../helpers/chainConfig.js';
import { call } from '../helpers/conformance.js';

type Schema = Record<string, any>;

let server: GatewayServer;
let url: string;
const bodyLimit = 64 * 1024;

beforeAll(async () => {
  const key = generatePrivateKey();
  const config = {
    ...configFromEnvironment({ PORT: '0', GATEWAY_LOG_LEVEL: 'silent' }, [makeChainConfig(31337)], key),
    bodyLimit,
  };
  server = await createServer(config);
  url = await server.start();
});
afterAll(async () => {
  await server?.stop();
});

const ids = Object.keys(operations) as OperationId[];
const withBody = ids.filter((id) => operations[id].body !== null);
const withRequiredQuery = ids.filter(
  (id) => ((operations[id].query?.required as string[] | undefined) ?? []).length > 0,
);
const withTypedQuery = ids.filter((id) =>
  Object.values((operations[id].query?.properties ?? {}) as Record<string, Schema>).some(
    (s) => s.type === 'integer' || s.type === 'number',
  ),
);

/** Resolves a `$ref` into the components, for the few places where the test needs the schema's shape. */
function deref(schema: Schema): Schema {
  let current = schema;
  while (typeof current?.$ref === 'string') {
    const parts = current.$ref.split('#/')[1]!.split('/');
    current = parts.slice(1).reduce<Schema>((node, part) => node?.[part], components as Schema);
  }
  return current;
}

/** A value that is of the wrong JSON type for the schema. */
function wrongValue(schema: Schema): unknown {
  const s = deref(schema);
  const types = Array.isArray(s.type) ? s.type : [s.type];
  if (types.includes('string')) return 12345;
  if (types.includes('integer') || types.includes('number')) return 'not-a-number';
  if (types.includes('boolean')) return 'not-a-boolean';
  if (types.includes('array')) return { not: 'an array' };
  if (types.includes('object')) return 'not-an-object';
  return undefined;
}

function pathFor(id: OperationId): string {
  return operations[id].path.replace(/\{[^}]+\}/g, (name) =>
    name.toLowerCase().includes('wallet') ? '0x1111111111111111111111111111111111111111' : `0x${'ab'.repeat(32)}`,
  );
}

describe('every operation with a body rejects bad bodies with 400 INVALID_INPUT', () => {
  it.each(withBody)('%s: malformed JSON', async (id) => {
    const res = await call(url, id, { path: pathFor(id), rawBody: '{"user": "0x12", ' });
    expect(res.status).toBe(400);
    expect(res.body.errorCode).toBe('INVALID_INPUT');
    expect(res.body.message).toMatch(/JSON/i);
  });

  it.each(withBody)('%s: a JSON array instead of an object', async (id) => {
    const res = await call(url, id, { path: pathFor(id), body: [1, 2, 3] });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ errorCode: 'INVALID_INPUT', statusCode: 400 });
  });

  // The gateway's own admin operations refuse unknown fields (a typo in a key's settings must not pass).
  it.each(withBody.filter((id) => operations[id].path.startsWith('/admin/')))('%s: unknown field', async (id) => {
    const res = await call(url, id, { path: pathFor(id), body: { definitelyNotAField: true } });
    expect(res.status).toBe(400);
    expect(res.body.errorCode).toBe('INVALID_INPUT');
    expect(res.body.message).toContain("unknown field 'definitelyNotAField'");
  });

  // The reference's operations ignore fields they do not know (forward compatibility with newer SDKs) and
  // name them in x-ignored-fields; what is left is still validated (here: missing required fields).
  it.each(withBody.filter((id) => !operations[id].path.startsWith('/admin/')))(
    '%s: unknown field is ignored and named',
    async (id) => {
      const res = await call(url, id, { path: pathFor(id), body: { definitelyNotAField: true } });
      expect(res.headers.get('x-ignored-fields')).toBe('definitelyNotAField');
      expect(res.status).toBeLessThan(500);
      expect(JSON.stringify(res.body)).not.toContain('definitelyNotAField');
    },
  );

  it.each(withBody.filter((id) => (deref(operations[id].body!.schema).required ?? []).length > 0))(
    '%s: missing required fields',
    async (id) => {
      const res = await call(url, id, { path: pathFor(id), body: {} });
      expect(res.status).toBe(400);
      expect(res.body.errorCode).toBe('INVALID_INPUT');
      const first = (deref(operations[id].body!.schema).required as string[])[0]!;
      expect(res.body.message).toContain(`${first} is required`);
    },
  );

  it.each(withBody)('%s: every declared field of the wrong type', async (id) => {
    const schema = deref(operations[id].body!.schema);
    const body: Record<string, unknown> = {};
    for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) {
      const value = wrongValue(property);
      if (value !== undefined) body[name] = value;
    }
    expect(Object.keys(body).length).toBeGreaterThan(0);
    const res = await call(url, id, { path: pathFor(id), body });
    expect(res.status).toBe(400);
    expect(res.body.errorCode).toBe('INVALID_INPUT');
  });

  it.each(withBody)('%s: oversized body gets 413', async (id) => {
    const res = await call(url, id, { path: pathFor(id), body: { padding: 'x'.repeat(bodyLimit + 1) } });
    expect(res.status).toBe(413);
    expect(res.body.errorCode).toBe('PAYLOAD_TOO_LARGE');
  });

  it.each(withBody)('%s: a non-JSON content type gets 415', async (id) => {
    const response = await fetch(url + pathFor(id), {
      method: operations[id].method,
      headers: { 'content-type': 'text/plain' },
      body: 'hello',
    });
    expect(response.status).toBe(415);
    expect(await response.json()).toMatchObject({ errorCode: 'UNSUPPORTED_MEDIA_TYPE', statusCode: 415 });
  });
});

describe('query parameters are checked against the contract', () => {
  it.each(withRequiredQuery)('%s: missing required query parameters', async (id) => {
    const res = await call(url, id, { path: pathFor(id) });
    expect(res.status).toBe(400);
    expect(res.body.errorCode).toBe('INVALID_INPUT');
    expect(res.body.message).toMatch(/query\..+ is required/);
  });

  it.each(withTypedQuery)('%s: a numeric query parameter given as text', async (id) => {
    const properties = operations[id].query!.properties as Record<string, Schema>;
    const name = Object.entries(properties).find(([, s]) => s.type === 'integer' || s.type === 'number')![0];
    const res = await call(url, id, { path: pathFor(id), query: { [name]: 'twelve' } });
    expect(res.status).toBe(400);
    expect(res.body.errorCode).toBe('INVALID_INPUT');
    expect(res.body.message).toContain(`query.${name}`);
  });
});

describe('routing errors keep the error shape', () => {
  it('an unknown path is a 404 NOT_FOUND', async () => {
    const response = await fetch(`${url}/no/such/route`);
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ errorCode: 'NOT_FOUND', statusCode: 404 });
  });
});
