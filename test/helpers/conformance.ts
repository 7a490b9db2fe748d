import type { ValidateFunction } from 'ajv/dist/2020.js';
import { expect } from 'vitest';
import { operations, type OperationId } from '../../generated/openapi/operations.js';
import { createAjv } from '../../src/rest/validation.js';

const ajv = createAjv(false);
const cache = new Map<string, ValidateFunction>();

/**
 * Asserts that a response is one the contract declares for the operation and that its body matches the
 * declared schema. Every REST test goes through this, so the contract cannot drift from the server.
 */
export function expectConforms(operationId: OperationId, status: number, body: unknown): void {
  const spec = operations[operationId];
  const schema = spec.responses[String(status)] ?? spec.responses.default;
  expect(schema, `${operationId} does not declare a ${status} response`).toBeDefined();
  if (!schema) return;
  const key = `${operationId}:${status}`;
  let validate = cache.get(key);
  if (!validate) {
    validate = ajv.compile(schema);
    cache.set(key, validate);
  }
  const ok = validate(body);
  expect(
    ok,
    `${operationId} ${status} body does not match the contract: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 500)}`,
  ).toBe(true);
}

/** A small fetch wrapper that parses JSON and checks conformance of the answer. */
export async function call(
  baseUrl: string,
  operationId: OperationId,
  init: {
    path?: string;
    query?: Record<string, string>;
    body?: unknown;
    rawBody?: string;
    headers?: Record<string, string>;
  } = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const spec = operations[operationId];
  const url = new URL(baseUrl + (init.path ?? spec.path));
  for (const [k, v] of Object.entries(init.query ?? {})) url.searchParams.set(k, v);
  const hasBody = init.body !== undefined || init.rawBody !== undefined;
  const response = await fetch(url, {
    method: spec.method,
    headers: { ...(hasBody ? { 'content-type': 'application/json' } : {}), ...init.headers },
    ...(hasBody ? { body: init.rawBody ?? JSON.stringify(init.body) } : {}),
  });
  const text = await response.text();
  const body = text.length > 0 ? JSON.parse(text) : undefined;
  expectConforms(operationId, response.status, body);
  return { status: response.status, body, headers: response.headers };
}
