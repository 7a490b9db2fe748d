import type { FastifyInstance } from 'fastify';
import { openapiDocument } from '../../generated/openapi/document.js';

type Obj = Record<string, unknown>;

const escape = (text: unknown): string =>
  String(text ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

function deref(value: unknown): Obj {
  let current = value as Obj;
  for (let depth = 0; depth < 10 && typeof current?.$ref === 'string'; depth++) {
    const parts = (current.$ref as string).slice(2).split('/');
    current = parts.reduce<Obj>((node, part) => (node?.[part] as Obj) ?? {}, openapiDocument);
  }
  return current ?? {};
}

function typeOf(schema: Obj): string {
  const s = deref(schema);
  if (typeof schema.$ref === 'string') return (schema.$ref as string).split('/').pop() ?? 'object';
  if (Array.isArray(s.enum)) return s.enum.map((v) => JSON.stringify(v)).join(' | ');
  if (s.type === 'array') return `${typeOf((s.items as Obj) ?? {})}[]`;
  if (Array.isArray(s.type)) return s.type.join(' | ');
  return String(s.type ?? (s.oneOf ? 'one of' : 'any'));
}

function fieldsTable(schema: Obj): string {
  const s = deref(schema);
  const properties = (s.properties ?? {}) as Record<string, Obj>;
  const required = new Set((s.required ?? []) as string[]);
  const rows = Object.entries(properties)
    .map(
      ([name, prop]) =>
        `<tr><td><code>${escape(name)}</code>${required.has(name) ? ' <b>required</b>' : ''}</td><td><code>${escape(typeOf(prop))}</code></td><td>${escape(deref(prop).description ?? prop.description ?? '')}</td></tr>`,
    )
    .join('');
  return rows ? `<table><tr><th>Field</th><th>Type</th><th>Description</th></tr>${rows}</table>` : '';
}

/** A readable API page rendered from the contract itself, with no external assets (works offline). */
export function renderDocumentationPage(): string {
  const info = (openapiDocument.info ?? {}) as Obj;
  const sections: string[] = [];
  for (const [route, item] of Object.entries((openapiDocument.paths ?? {}) as Record<string, Obj>)) {
    for (const [method, raw] of Object.entries(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const op = raw as Obj;
      const params = ((op.parameters ?? []) as Obj[]).map(deref);
      const paramRows = params
        .map((p) => `<tr><td><code>${escape(p.name)}</code> (${escape(p.in)})${p.required ? ' <b>required</b>' : ''}</td><td><code>${escape(typeOf((p.schema as Obj) ?? {}))}</code></td><td>${escape(p.description ?? '')}</td></tr>`)
        .join('');
      const body = deref(op.requestBody);
      const bodySchema = ((body.content as Obj | undefined)?.['application/json'] as Obj | undefined)?.schema as Obj | undefined;
      const responses = Object.entries((op.responses ?? {}) as Record<string, Obj>)
        .map(([status, r]) => `<li><code>${escape(status)}</code> ${escape(deref(r).description ?? '')}</li>`)
        .join('');
      sections.push(`<section id="${escape(op.operationId)}">
<h2><span class="m ${escape(method)}">${escape(method.toUpperCase())}</span> <code>${escape(route)}</code>${op.deprecated ? ' <em>deprecated</em>' : ''}</h2>
<p><b>${escape(op.summary ?? '')}</b> <small>operationId <code>${escape(op.operationId)}</code></small></p>
<p>${escape(op.description ?? '')}</p>
${paramRows ? `<h3>Parameters</h3><table><tr><th>Name</th><th>Type</th><th>Description</th></tr>${paramRows}</table>` : ''}
${bodySchema ? `<h3>Request body</h3>${fieldsTable(bodySchema)}` : ''}
<h3>Responses</h3><ul>${responses}</ul>
</section>`);
    }
  }
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(info.title)}</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse;width:100%;margin:.5rem 0}td,th{border:1px solid #ddd;padding:.25rem .5rem;text-align:left;vertical-align:top}
section{border-top:1px solid #ccc;padding-top:.5rem}.m{font:bold 13px monospace;padding:2px 6px;border-radius:4px;color:#fff}
.get{background:#2b7}.post{background:#27b}code{font-size:13px}</style></head><body>
<h1>${escape(info.title)} <small>${escape(info.version)}</small></h1><p>${escape(info.description)}</p>
<p>Machine-readable contract: <a href="/documentation/json">/documentation/json</a> (OpenAPI 3.1). GraphQL: <a href="/graphql">/graphql</a>.</p>
${sections.join('\n')}</body></html>`;
}

/** `/documentation/json` serves the OpenAPI document; `/documentation` a page rendered from it. */
export function registerDocumentation(app: FastifyInstance): void {
  const page = renderDocumentationPage();
  app.get('/documentation/json', async (_request, reply) => reply.type('application/json').send(openapiDocument));
  app.get('/documentation', async (_request, reply) => reply.type('text/html; charset=utf-8').send(page));
}
