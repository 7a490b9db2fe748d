// The layer rules of docs/architecture.md ("Layers"), checked by `npm run lint` in CI.
// server (composition root) -> rest | graphql | ws (transports), chain (adapters) -> core (domain) -> store -> records.
// No exceptions: nothing may cross the line or close a circle.

/** The folders of src/core that hold a domain area (every folder but vocabulary and chains). */
const CORE_AREAS = [
  'apiKeys',
  'appFees',
  'catalogue',
  'depositAddresses',
  'events',
  'fees',
  'fill',
  'gasless',
  'inventory',
  'ledger',
  'limits',
  'permits',
  'quote',
  'requests',
  'settlement',
  'solver',
  'webhooks',
  'vocabulary',
];

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
      name: 'records-at-the-bottom',
      severity: 'error',
      comment:
        'src/records holds the records the core reads and the store keeps (a request, a deposit, a status): both ' +
        'layers import them, so they import nothing of the layers above them.',
      from: { path: '^src/records/' },
      to: { path: '^(src/(?!records/)|generated/)' },
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
    {
      name: 'core-vocabulary-at-the-bottom',
      severity: 'error',
      comment:
        'core/vocabulary holds the types the core areas share (Caller, Amount, ResolvedRoute, ...): it names only ' +
        'the configuration, the fill call and the errors beside itself, so every area can import it.',
      from: { path: '^src/core/vocabulary/' },
      to: {
        path: '^src/core/',
        pathNot: '^src/core/(vocabulary/|chains/types[.]ts$|fill/fillTransaction[.]ts$|errors[.]ts$)',
      },
    },
    {
      name: 'core-chains-below-the-areas',
      severity: 'error',
      comment:
        'core/chains is the configuration every area reads (CoreConfig and the areas settings types): it imports ' +
        'no area; an area keeps its defaults beside its own code.',
      from: { path: '^src/core/chains/' },
      to: { path: `^src/core/(${CORE_AREAS.join('|')})/` },
    },
    {
      name: 'core-quote-above-fees-limits-permits-keys',
      severity: 'error',
      comment:
        'The quote uses the fees, the limits, the permits and the API keys; they share its types through ' +
        'core/vocabulary and never import the quote back.',
      from: { path: '^src/core/(fees|limits|permits|apiKeys)/' },
      to: { path: '^src/core/quote/' },
    },
    {
      name: 'core-requests-above-fees',
      severity: 'error',
      comment: 'The requests render the fees; the fee views they share are core/vocabulary, not the requests.',
      from: { path: '^src/core/fees/' },
      to: { path: '^src/core/requests/' },
    },
    {
      name: 'core-requests-below-webhooks',
      severity: 'error',
      comment: 'Webhooks post what the requests render; the requests never import the webhooks back.',
      from: { path: '^src/core/requests/' },
      to: { path: '^src/core/webhooks/' },
    },
    {
      name: 'core-api-keys-below-webhooks',
      severity: 'error',
      comment:
        'Webhooks read the keys (URL, sealed secret); a key opens its own secret and never imports the webhooks.',
      from: { path: '^src/core/apiKeys/' },
      to: { path: '^src/core/webhooks/' },
    },
    {
      name: 'core-limits-below-gasless',
      severity: 'error',
      comment: 'Gasless execution checks the limits; the limits read their settings from core/chains, not from it.',
      from: { path: '^src/core/limits/' },
      to: { path: '^src/core/gasless/' },
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
