// ESLint: the type-aware rules of typescript-eslint over the sources, benchmarks, codegen scripts and tests.
// Formatting is Prettier's job; `npm run lint` runs both and the dependency rules (.dependency-cruiser.cjs).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const MAX_FUNCTION_LINES = 100;

/** The files whose functions may run past MAX_FUNCTION_LINES, each with why. */
const LONG_FUNCTIONS = [
  ['src/core/keccak.ts', 'Keccak-f rounds are unrolled for speed, as the reference implementation writes them'],
  [
    'src/chain/depositWatcher.ts',
    "the follower's hooks for deposits, one closure over the carriers and used-deposit checks",
  ],
  [
    'src/chain/depositAddressWatcher.ts',
    "the follower's hooks for deposit addresses, one closure over the address set and traces",
  ],
  ['src/chain/sender/sending.ts', 'one closure over the allocator, queue and turn that each send goes through'],
  ['src/chain/sender/receipts.ts', 'a closure over the waiters of pending receipts'],
  ['src/chain/devnetContracts.ts', 'deploys one chain contract graph in dependency order'],
  ['src/chain/heads.ts', 'a closure over the pushed-head subscription and its polling fallback'],
  ['src/chain/market.ts', 'a closure over the price and gas caches that its readers share'],
  ['src/chain/permits.ts', 'a closure over one chain client that every permit call shares'],
  ['src/core/depositAddresses/processor.ts', 'a closure over the sweep and refund state of one processor'],
  ['src/core/webhooks/createWebhookDispatcher.ts', 'a closure over the delivery queue, timers and backoff'],
  ['src/core/events/requestEventBus.ts', 'a closure over the subscribers, outbox cursor and listener'],
  ['src/core/settlement/settler.ts', 'a closure over the settlement batch state'],
  ['src/core/reconciliation/reconciler.ts', 'a closure over the reconciliation schedule and its last result'],
  ['src/core/gasless/gaslessRunner.ts', 'a closure over the resumed batches and their timers'],
  ['src/core/gasless/executeGasless.ts', 'one batch checked, simulated, recorded and sent: the steps share the checks'],
  ['src/core/apiKeys/rateLimiter.ts', 'a closure over the buckets and their shared sweep'],
  ['src/core/quote/getQuote.ts', 'the quote pipeline, step by step in the order the reference answers errors'],
  ['src/core/quote/pricing.ts', 'one price computation whose fee terms depend on each other'],
  ['src/core/quote/resolve.ts', 'validation in the order a client can act on, which the error codes follow'],
  ['src/core/solver/repriceAtFill.ts', 'one repricing whose fee terms depend on each other'],
  ['src/server/createServer.ts', 'the composition root wires every part in one place'],
  ['src/server/solverRuntime.ts', 'the solver composition wires every part in one place'],
  ['src/server/metrics.ts', 'the metric definitions, one after the other'],
  ['src/server/keysCli.ts', 'one command line, a case for each subcommand'],
  ['src/graphql/registerGraphQL.ts', 'the GraphQL routes, limits and websocket wiring in one place'],
  ['src/store/pgliteProxy.ts', 'a closure over the worker and its pending queries'],
  ['src/chain/follower/follower.ts', 'a closure over one follower pass: head, rewind, ranges and settling share state'],
  ['src/chain/keyWatch.ts', "a closure over each chain's last seen nonce and the stop it may order"],
  ['src/chain/sender/batchTurn.ts', 'a closure over the waiting sends of one turn and their broadcast order'],
  ['src/core/solver/fillGate.ts', 'a closure over the pauses, holds and outflow window the gate keeps'],
  ['src/chain/dex/dexBook.ts', "a closure over each chain's pool states and the refresh in flight"],
  ['src/chain/dex/readPoolStates.ts', 'one read at one block: the batches depend on what the batch before found'],
  ['src/core/permits/depositor.ts', 'a closure over the permits in flight, each re-checked on chain before its send'],
  ['src/chain/devnetDex.ts', 'deploys and seeds the Uniswap contracts in dependency order'],
];

export default tseslint.config(
  { ignores: ['generated/**', 'node_modules/**', '.devnet/**', 'contracts/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // A leading underscore marks a parameter or binding that an interface makes us take but we don't use.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // Handlers satisfy a promise-returning interface whether or not they wait on anything.
      '@typescript-eslint/require-await': 'off',
      // A switch over a union names every member, so a new status or kind is a lint error where it is not handled.
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
    },
  },
  {
    // A function reads top to bottom on a screen or two. The count includes nested functions, so a factory's closure
    // counts its methods too.
    files: ['src/**/*.ts'],
    rules: {
      'max-lines-per-function': ['error', { max: MAX_FUNCTION_LINES, skipBlankLines: true, skipComments: true }],
    },
  },
  ...LONG_FUNCTIONS.map(([file, _reason]) => ({ files: [file], rules: { 'max-lines-per-function': 'off' } })),
  {
    // Migrations are written against `Kysely<any>`, as kysely advises: they must not depend on today's table types.
    files: ['src/store/migrations/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Tests read JSON answers whose shapes they assert; `any` there is checked by the assertions themselves.
    files: ['test/**'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // Plain JavaScript (config files, the explorer page's script, the PGlite worker) has no types to check: it is
    // parsed without the TypeScript project, and only the untyped rules apply.
    files: ['**/*.mjs', '**/*.js', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: {
        console: 'readonly',
        process: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        module: 'writable',
        require: 'readonly',
      },
    },
  },
  {
    // The explorer's script runs in the browser (served by src/server/explorer.ts), not in Node.
    files: ['src/server/explorer/**/*.js'],
    languageOptions: {
      globals: Object.fromEntries(
        ['document', 'window', 'location', 'history', 'fetch', 'URLSearchParams', 'WebSocket', 'Node'].map((name) => [
          name,
          'readonly',
        ]),
      ),
    },
  },
);
