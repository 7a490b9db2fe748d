/**
 * What the operator commands that read a config file and never open a database share (`npm run approve`,
 * `npm run doctor`): the `--config <file>` argument (or `GATEWAY_CONFIG`), the file parsed with the solver's key,
 * and how a command's outcome becomes its exit status.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ConfigError, type GatewayConfig } from './config.js';
import { parseConfigFile } from './configFile.js';

/**
 * Reads the command line and the config file it names. Returns the config and its path, or the exit status when
 * there is nothing to run: 0 for `--help`, 2 for a bad command line (usage shown), 1 for a config that cannot be
 * read (its problems printed).
 */
export function readCliConfig(usage: string): { config: GatewayConfig; file: string } | number {
  const { values } = parseArgs({ options: { config: { type: 'string' }, help: { type: 'boolean' } } });
  const file = values.config ?? process.env.GATEWAY_CONFIG;
  if (values.help === true || file === undefined || file === '') {
    process.stderr.write(`${usage}\n`);
    return values.help === true ? 0 : 2;
  }
  try {
    // The chains and the key only: these commands open no database, so none needs to be named.
    return { config: parseConfigFile(readFileSync(file, 'utf8'), process.env, file), file };
  } catch (error) {
    const message =
      error instanceof ConfigError
        ? error.message
        : `cannot read config file ${file}: ${error instanceof Error ? error.message : String(error)}`;
    process.stdout.write(`✗ ${message}\n`);
    return 1;
  }
}

/** Runs a command's `main` and exits with its status (1 with the message when it throws). */
export function exitWith(main: () => Promise<number>): void {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
