/**
 * `npm run codegen` writes everything under `generated/` from the sources of truth (`schema/`,
 * `contracts/`); `npm run codegen:check` regenerates in memory and fails when `generated/` differs,
 * so a schema change without a codegen run (or a hand edit of generated code) cannot land.
 */
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateContracts } from './contracts.js';
import { generateGraphql } from './graphql.js';
import { generateOpenapi } from './openapi.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const check = process.argv.includes('--check');

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const files: string[] = [];
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) files.push(...(await listFiles(full)));
    else files.push(path.relative(root, full));
  }
  return files;
}

async function main(): Promise<void> {
  const outputs: Record<string, string> = {
    ...(await generateOpenapi(root)),
    ...(await generateGraphql(root)),
    ...(await generateContracts(root)),
  };
  const existing = new Set(await listFiles(path.join(root, 'generated')));
  const problems: string[] = [];
  for (const [file, content] of Object.entries(outputs).sort(([a], [b]) => a.localeCompare(b))) {
    existing.delete(file);
    const target = path.join(root, file);
    const current = await readFile(target, 'utf8').catch(() => null);
    if (current === content) continue;
    if (check) {
      problems.push(current === null ? `missing: ${file}` : `differs: ${file}`);
    } else {
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, content);
      console.log(`wrote ${file}`);
    }
  }
  for (const stale of existing) {
    if (check) problems.push(`not generated (stale): ${stale}`);
    else {
      await rm(path.join(root, stale));
      console.log(`removed ${stale}`);
    }
  }
  if (problems.length > 0) {
    console.error(
      `generated/ is out of date with schema/ and contracts/; run \`npm run codegen\` and commit:\n  ${problems.join('\n  ')}`,
    );
    process.exit(1);
  }
  console.log(check ? 'generated/ is up to date' : `codegen done (${Object.keys(outputs).length} files)`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
