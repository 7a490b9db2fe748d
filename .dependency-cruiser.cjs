// The layer rules of docs/architecture.md ("Layers"), checked by `npm run lint` in CI.
// server (composition root) -> rest | graphql | ws (transports), chain (adapters) -> core (domain) -> store.
// No exceptions: nothing may cross the line or close a circle.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Modules form no import circle: give shared types and helpers a small module of their own.',
      from: {},
      to: { circular: true },
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
      to: { path: '^(src/(core|rest|graphql|ws|server|chain)/|generated/)' },
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
