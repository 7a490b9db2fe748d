/**
 * `npm start`: with no configuration, starts the embedded devnet (three anvil chains with the contracts
 * deployed and accounts funded) and serves the gateway on it; with `--config <file>` or `GATEWAY_CONFIG`,
 * serves the configured networks. Ctrl-C or SIGTERM stops the server and every child process (see ./shutdown.ts).
 * The devnet without `DATABASE_URL` or `GATEWAY_DATA_DIR` keeps PGlite in a fresh temporary directory, removed at
 * the stop (see ./devnetDataDir.ts).
 */
import path from 'node:path';
import { startDevnet, writeDevnetDescriptor, type Devnet } from '../chain/devnet.js';
import {
  ConfigError,
  configFromEnvironment,
  devnetFromEnvironment,
  listenAddressFromEnvironment,
  type GatewayConfig,
} from './config.js';
import { configFilePath, loadConfigFile } from './configFile.js';
import { DataDirInUseError } from '../store/dataDirLock.js';
import { ChainIdentityError } from './chainIdentity.js';
import { createServer, type GatewayServer } from './createServer.js';
import { devnetChainConfigs } from './devnetConfig.js';
import { createTemporaryDataDir, type TemporaryDataDir } from './devnetDataDir.js';
import { checkPortsFree } from './portCheck.js';
import { installShutdown, SHUTDOWN_LIMIT_MS } from './shutdown.js';
import { tuneV8ForServing } from './v8Tuning.js';

const say = (message: string) => process.stdout.write(`${message}\n`);

let devnet: Devnet | null = null;
let server: GatewayServer | null = null;
let dataDir: TemporaryDataDir | null = null;

async function main(): Promise<void> {
  tuneV8ForServing();
  let stopping = false;
  installShutdown({
    say,
    limitMs: SHUTDOWN_LIMIT_MS,
    stop: async () => {
      stopping = true;
      await server?.stop().catch((error: unknown) => console.error('error stopping the server:', error));
      await devnet?.stop().catch((error: unknown) => console.error('error stopping the devnet:', error));
      dataDir?.remove();
    },
  });

  const file = configFilePath(process.argv.slice(2), process.env);
  const devnetSettings = file ? null : devnetFromEnvironment(process.env);
  await checkPortsFree({
    ...listenAddressFromEnvironment(process.env),
    devnetBasePort: devnetSettings === null ? null : devnetSettings.basePort,
  });
  let config: GatewayConfig;
  let descriptorPath: string | null = null;
  if (file) {
    config = loadConfigFile(file, process.env);
    say(`Serving ${config.chains.length} configured chain(s) from ${file}`);
    if (!config.databaseUrl && !config.dataDir)
      say('Database: PGlite in memory (GATEWAY_IN_MEMORY_DATABASE=true): everything it holds is lost at the stop');
  } else {
    say('No configuration given: starting the embedded devnet (three anvil chains).');
    const { basePort, blockTime } = devnetSettings ?? devnetFromEnvironment(process.env);
    devnet = await startDevnet({
      basePort,
      blockTime,
      onProgress: (m) => say(`  ${m}`),
    });
    if (stopping) return;
    descriptorPath = path.resolve('.devnet/devnet.json');
    await writeDevnetDescriptor(descriptorPath, devnet.descriptor);
    const env = { ...process.env };
    if (!env.DATABASE_URL && !env.GATEWAY_DATA_DIR) {
      dataDir = createTemporaryDataDir();
      env.GATEWAY_DATA_DIR = dataDir.path;
      say(`Database: PGlite in ${dataDir.path} (new, removed at the stop; set GATEWAY_DATA_DIR to keep one)`);
    }
    config = configFromEnvironment(env, devnetChainConfigs(devnet.descriptor), devnet.descriptor.solver.privateKey);
  }

  say('Starting the gateway...');
  server = await createServer(config);
  const url = await server.start();
  say(`\nGateway ready at ${url}`);
  if (descriptorPath && devnet) {
    const account = devnet.descriptor.accounts[0];
    say(`Devnet descriptor (RPC URLs, contracts, tokens, funded accounts): ${descriptorPath}`);
    say(`Solver: ${devnet.descriptor.solver.address}`);
    if (account) say(`Test account: ${account.address}`);
  }
  say(`
Try:
  curl ${url}/chains
  curl ${url}/ready
  open ${url}/documentation      (API reference; OpenAPI at ${url}/documentation/json)
  curl -s ${url}/graphql -H 'content-type: application/json' -d '{"query":"{ chains { id name currency { symbol } } }"}'

Press Ctrl-C to stop.`);
}

main().catch(async (error: unknown) => {
  if (error instanceof ConfigError || error instanceof ChainIdentityError || error instanceof DataDirInUseError)
    console.error(error.message);
  else console.error('Failed to start:', error);
  // Never leave anvil children behind when start-up fails half way.
  await server?.stop().catch(() => undefined);
  await devnet?.stop().catch(() => undefined);
  dataDir?.remove();
  process.exit(1);
});
