/**
 * Generates the GraphQL side of the contract from `schema/schema.graphql`:
 * `generated/graphql/resolvers.ts`, the resolver types (graphql-codegen `typescript` + `typescript-resolvers`,
 * configured in `codegen.ts` at the repository root) that `src/graphql` must satisfy.
 * Writes nothing itself: `codegen/run.ts` writes or drift-checks the returned files.
 */
import { generate } from '@graphql-codegen/cli';
import config from '../codegen.js';

export async function generateGraphql(root: string): Promise<Record<string, string>> {
  // `generate` is declared as returning `any`; with `saveOutput: false` it answers the files it generated.
  const outputs = (await generate({ ...config, cwd: root, silent: true }, false)) as Array<{
    filename: string;
    content: string;
  }>;
  const files: Record<string, string> = {};
  for (const output of outputs) {
    const file = output.filename.split('\\').join('/');
    files[file] = output.content.endsWith('\n') ? output.content : `${output.content}\n`;
  }
  return files;
}
