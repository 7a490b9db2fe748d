import type { ErrorObject, ValidateFunction } from 'ajv';

/*
 * Forward compatibility of request bodies. The reference's SDK adds body options in new releases; a gateway
 * that refused every field it does not know would break the day a client upgrades. So a body that is valid
 * except for fields the contract does not declare is accepted: those fields are removed before the handler
 * runs (so nothing downstream can act on them) and named back to the caller. Wrong types and missing
 * required fields are still refused.
 */

/** The header that names the body fields a request carried and the gateway ignored. */
export const IGNORED_FIELDS_HEADER = 'x-ignored-fields';

/** At most this many rounds of removal: each round removes every unknown field the validator reported. */
const MAX_ROUNDS = 8;

export interface StrippedBody {
  body: unknown;
  /** Dotted paths of the removed fields (`foo`, `appFees.0.note`), in the order found. */
  ignored: string[];
  /** Whether `body` is valid: then the caller need not validate it again. */
  valid: boolean;
}

/**
 * Removes from `body` (a copy; the original is untouched) every field the schema's `additionalProperties:
 * false` refuses, until the validator reports no more. Only plain object schemas count: a field that one branch
 * of a `oneOf` / `anyOf` refuses may be what another branch needs, so those stay errors.
 */
export function stripUnknownFields(validate: ValidateFunction, body: unknown): StrippedBody {
  if (validate(body)) return { body, ignored: [], valid: true };
  let current: unknown = structuredClone(body);
  const ignored: string[] = [];
  let valid = false;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const unknown = (validate.errors ?? []).filter(isStrippable);
    if (unknown.length === 0) break;
    for (const error of unknown) {
      const parent = resolvePointer(current, error.instancePath);
      const field = String(error.params.additionalProperty);
      if (parent === null || !Object.hasOwn(parent, field)) continue;
      delete parent[field];
      ignored.push([...pointerSegments(error.instancePath), field].join('.'));
    }
    if ((valid = validate(current))) break;
  }
  // Nothing removed: hand back the caller's body so the validator's errors describe exactly what was sent.
  if (ignored.length === 0) current = body;
  return { body: current, ignored, valid };
}

const isStrippable = (error: ErrorObject): boolean =>
  error.keyword === 'additionalProperties' && !/\/(oneOf|anyOf)\//.test(error.schemaPath);

function pointerSegments(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function resolvePointer(root: unknown, pointer: string): Record<string, unknown> | null {
  let node: unknown = root;
  for (const segment of pointerSegments(pointer)) {
    if (typeof node !== 'object' || node === null) return null;
    node = (node as Record<string, unknown>)[segment];
  }
  return typeof node === 'object' && node !== null && !Array.isArray(node) ? (node as Record<string, unknown>) : null;
}
