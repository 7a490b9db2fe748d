// The layer rules of docs/architecture.md ("Layers"), checked by `npm run lint` in CI.
// server (composition root) -> rest | graphql | ws (transports), chain (adapters) -> core (domain) -> store -> records.
// No exceptions: nothing may cross the line or close a circle.

/**
 * The rooms of src/core (its folders, and its files beside them) in layers, from the ground up: a room imports only
 * rooms of lower layers, and a file of a layer may import the files beside it (no-circular guards those) but no
 * folder of its own layer, so the core's map has no arrow that runs back up (`farm-studio look src/core`). A room
 * that needs one of its own layer or above moves up a layer here, or the shared part moves down.
 */
const CORE_LAYERS = [
  // The ground: helpers that know no area, and the services the context carries (ports) that the areas implement.
  [
    'abi.ts',
    'burnAddresses.ts',
    'cache.ts',
    'errors.ts',
    'faults.ts',
    'gasMargin.ts',
    'inputs.ts',
    'json.ts',
    'keccak.ts',
    'logger.ts',
    'metrics.ts',
    'periodicJob.ts',
    'powersOfTen.ts',
    'sleeper.ts',
    'dex/',
    // The money rules (pure functions of the solver's facts) and the deposit-match rule: they read records only.
    'ledger/',
    'deposits/',
  ],
  // The services the context carries, which the areas implement (a sent transaction states its ledger facts).
  ['ports/'],
  // The configuration every area reads.
  ['chains/'],
  ['fill/', 'market.ts', 'settings.ts'],
  // The words the areas share (Caller, Amount, ResolvedRoute, request ids and status moves), and the context.
  ['vocabulary/', 'context.ts', 'usd.ts'],
  // A request's status change: its row's move, its event and delivery, its ledger movements.
  ['status/'],
  ['apiKeys/', 'catalogue/', 'fees/', 'inventory/', 'limits/', 'reconciliation/', 'settlement/'],
  ['appFees/', 'gasless/'],
  ['permits/'],
  ['quote/'],
  ['depositAddresses/', 'solver/'],
  ['requests/'],
  ['events/', 'webhooks/'],
];

/** A room as a regular expression over the path below src/core/: a folder and everything in it, or one file. */
const roomPattern = (room) => (room.endsWith('/') ? room : `${room.replace('.', '[.]')}$`);
const roomsPattern = (rooms) => `^src/core/(${rooms.map(roomPattern).join('|')})`;

/** One rule per layer: its rooms import no room above it, and no folder of their own layer but their own. */
const coreLayerRules = CORE_LAYERS.map((layer, index) => ({
  name: `core-layer-${index + 1}`,
  severity: 'error',
  comment:
    `Layer ${index + 1} of src/core (${layer.join(', ')}) imports only the layers below it (CORE_LAYERS), so ` +
    'no arrow runs back up between the core areas: share a type through core/vocabulary or core/ports instead.',
  from: { path: `^src/core/(${layer.map((room) => room.replace(/\/$/, '').replace('.', '[.]')).join('|')})(/|$)` },
  to: {
    path: roomsPattern([...CORE_LAYERS.slice(index + 1).flat(), ...layer.filter((room) => room.endsWith('/'))]),
    pathNot: '^src/core/$1/',
  },
}));

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
      name: 'core-rooms-are-layered',
      severity: 'error',
      comment: 'Every folder and file of src/core is named in CORE_LAYERS, so the layer rules see it.',
      from: {},
      to: { path: '^src/core/', pathNot: roomsPattern(CORE_LAYERS.flat()) },
    },
    ...coreLayerRules,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|generated/contracts)' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.mjs'] },
  },
};
