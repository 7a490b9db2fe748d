import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { components, componentsId, type OperationId, type OperationSpec } from '../../generated/openapi/operations.js';
import { GatewayError } from '../core/errors.js';
import { stripUnknownFields } from './unknownFields.js';

// ajv-formats is CommonJS: under NodeNext its default import is the module object, whose `default` is the plugin.
const addFormats = addFormatsModule.default;

/** The parts of an HTTP request the contract constrains. */
export interface RawRequestParts {
  query: unknown;
  params: unknown;
  headers: unknown;
  body: unknown;
}

export interface OperationValidator {
  /**
   * Validates (and coerces query/path/header strings to their declared types); throws INVALID_INPUT. Body
   * fields the contract does not declare are removed from `parts.body` (outside `/admin/`) and handed to
   * `onIgnored` before anything is thrown, so even a refused request can say what was ignored.
   */
  validateRequest(parts: RawRequestParts, onIgnored?: (fields: string[]) => void): void;
}

/** An Ajv for the contract's schemas, with the document's components registered so their refs resolve. */
export function createAjv(coerceTypes: boolean): Ajv2020 {
  // OpenAPI annotation keywords that are not JSON Schema vocabulary are allowed, not enforced.
  const ajv = new Ajv2020({ allErrors: true, strict: false, coerceTypes, useDefaults: false, removeAdditional: false });
  addFormats(ajv);
  ajv.addSchema({ $id: componentsId, components });
  return ajv;
}

/** Compiles the request validators of every operation once, at server construction. */
export function createValidators(table: Record<OperationId, OperationSpec>): Record<OperationId, OperationValidator> {
  // Query, path and header values arrive as strings and are coerced to the declared types; bodies are JSON
  // and must already have the right types.
  const coercing = createAjv(true);
  const strict = createAjv(false);
  const result = {} as Record<OperationId, OperationValidator>;
  for (const [id, spec] of Object.entries(table) as Array<[OperationId, OperationSpec]>) {
    const query = spec.query ? coercing.compile(spec.query) : null;
    const params = spec.params ? coercing.compile(spec.params) : null;
    const headers = spec.headers ? coercing.compile(spec.headers) : null;
    const body = spec.body ? strict.compile(spec.body.schema) : null;
    // The gateway's own admin operations keep refusing unknown fields: a typo in a key's settings must not
    // pass silently. The reference's operations accept them (see unknownFields.ts).
    const forwardCompatible = !spec.path.startsWith('/admin/');
    result[id] = {
      validateRequest(parts, onIgnored) {
        // Every part is checked and every problem reported together, so a client fixes its request in one go.
        const problems: Problem[] = [];
        collect(query, parts.query ?? {}, 'query', problems);
        collect(params, parts.params ?? {}, 'path', problems);
        collect(headers, parts.headers ?? {}, 'header', problems);
        if (spec.body) {
          if (parts.body === undefined || parts.body === null) {
            if (spec.body.required) problems.push({ sentence: 'body is required (a JSON object)', error: null });
          } else {
            let valid = false;
            if (forwardCompatible && body) {
              const stripped = stripUnknownFields(body, parts.body);
              parts.body = stripped.body;
              valid = stripped.valid;
              if (stripped.ignored.length > 0) onIgnored?.(stripped.ignored);
            }
            // Stripping already validated the body it hands back: a valid one is not validated twice.
            if (!valid) collect(body, parts.body, 'body', problems);
          }
        } else if (parts.body !== undefined && parts.body !== null && parts.body !== '') {
          problems.push({ sentence: `${spec.method} ${spec.path} takes no body`, error: null });
        }
        if (problems.length > 0) throw toError(problems);
      },
    };
  }
  return result;
}

interface Problem {
  sentence: string;
  error: ErrorObject | null;
}

function collect(validate: ValidateFunction | null, data: unknown, where: string, problems: Problem[]): void {
  if (!validate || validate(data)) return;
  for (const error of validate.errors ?? []) problems.push({ sentence: describe(error, where), error });
}

/** Unknown fields first (the usual typo), then the rest; at most eight sentences, duplicates dropped. */
function toError(problems: Problem[]): GatewayError {
  const ordered = [...problems].sort((a, b) => rank(a) - rank(b));
  const sentences = [...new Set(ordered.map((p) => p.sentence))];
  const shown = sentences.slice(0, 8);
  const more = sentences.length > shown.length ? ` (and ${sentences.length - shown.length} more)` : '';
  const data = ordered
    .filter((p) => p.error)
    .slice(0, 20)
    .map((p) => summarize(p.error!));
  // A malformed address alone is `INVALID_ADDRESS`, as the core (and GraphQL's Address scalar) answer it.
  const code = problems.every(isAddressPattern) ? 'INVALID_ADDRESS' : 'INVALID_INPUT';
  return new GatewayError(code, `Invalid request: ${shown.join('; ')}${more}`, {
    data: JSON.stringify(data),
  });
}

const ADDRESS_PATTERN = '^0x[0-9a-fA-F]{40}$';

const isAddressPattern = (problem: Problem): boolean =>
  problem.error?.keyword === 'pattern' && problem.error.params.pattern === ADDRESS_PATTERN;

const rank = (problem: Problem) =>
  problem.error?.keyword === 'additionalProperties' ? 0 : problem.error?.keyword === 'required' ? 1 : 2;

/** One readable sentence per problem, e.g. `body.amount must match pattern "^[0-9]+$"`. */
function describe(error: ErrorObject, where: string): string {
  const at = `${where}${error.instancePath.replace(/\//g, '.')}`;
  switch (error.keyword) {
    case 'required':
      return `${at}.${String(error.params.missingProperty)} is required`;
    case 'additionalProperties':
      return `${at} has unknown field '${String(error.params.additionalProperty)}'`;
    case 'pattern':
      // UintString: the usual mistake is a decimal amount ("1.5"); a bare regex does not say what is wanted.
      if (error.params.pattern === '^[0-9]+$') {
        return `${at} must be a whole number written as digits: amounts are integers in the currency's smallest unit (1.5 USDC, 6 decimals, is "1500000"; 0.01 ETH, 18 decimals, is "10000000000000000")`;
      }
      return `${at} ${error.message ?? 'is invalid'}`;
    case 'enum':
      return `${at} must be one of ${(error.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      return `${at} ${error.message ?? 'is invalid'}`;
  }
}

function summarize(error: ErrorObject): Record<string, unknown> {
  return { path: error.instancePath, keyword: error.keyword, message: error.message, params: error.params };
}
