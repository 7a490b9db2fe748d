// The layer rules of docs/architecture.md ("Layers"), checked by `npm run lint` in CI.
// server (composition root) -> rest | graphql | ws (transports), chain (adapters) -> core (domain) -> store.
//
// One known exception, kept narrow on purpose: the store writes ledger movements in the same transaction as the
// status change that causes them, and takes them from src/core/ledger/movements.ts (which reads store records).
// The ledger is being extended in parallel (issue #17); moving those movement rules below the store (or passing
// them in from the core) is left to after that lands. Nothing else may cross the line or close a circle.
const ledgerMovements = '^src/core/ledger/movements[.]ts$';
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Modules form no import circle: give shared types and helpers a small module of their own.',
      from: {},
      to: { circular: true, viaNot: ledgerMovements },
    },
    {
      name: 'core-imports-no-transport',
      severity: 'error',
      comment: 'The core is the domain: it imports no transport, adapter, composition root or generated code.',
      from: { path: '^src/core/' },
      to: { path: '^(src/(rest|graphql|ws|server|chain)/|generated/)' },
    },
    {
      name: 'store-imports-nothing-above',
      severity: 'error',
      comment: 'Storage is the bottom layer: it imports nothing from the layers that use it.',
      from: { path: '^src/store/' },
      to: { path: '^(src/(core|rest|graphql|ws|server|chain)/|generated/)', pathNot: ledgerMovements },
    },
    {
      name: 'adapters-import-no-transport',
      severity: 'error',
      comment: 'Chain adapters implement core ports; they know nothing of the transports or the composition root.',
      from: { path: '^src/chain/' },
      to: { path: '^src/(rest|graphql|ws|server)/' },
    },
    {
      name: 'transports-import-no-root',
      severity: 'error',
      comment: 'Transports are composed by src/server; they never import it back.',
      from: { path: '^src/(rest|graphql|ws)/' },
      to: { path: '^src/server/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|generated/contracts)' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.mjs'] },
  },
};
