import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // graphql 16 ships CommonJS (`main`) and ESM (`module`) copies. Node loads the CommonJS one for every
    // package (graphql-yoga included); Vite would pick the ESM one for our code, and two copies of graphql
    // cannot share a schema. Point Vite at the copy Node uses.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    // Tests start anvil chains and databases; two cores are shared, so keep parallelism modest.
    maxWorkers: 2,
    testTimeout: 60_000,
    // A devnet (three anvils, deployments) plus a gateway can take a minute to start on a busy 2-core machine.
    hookTimeout: 240_000,
  },
});
