/** What every benchmark script shares: option errors, number parsing, the machine line and the exit status. */
import os from 'node:os';

/** A bad command line: its message and the usage are printed, and the exit status is 2 (0 for `--help`). */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** A positive number from an option's text, or a UsageError. */
export function positiveNumber(flag: string, text: string, zeroAllowed = false): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0 || (value === 0 && !zeroAllowed))
    throw new UsageError(`${flag} must be a positive number, got '${text}'`);
  return value;
}

/** A positive whole number from an option's text. */
export function positiveInteger(flag: string, text: string): number {
  const value = positiveNumber(flag, text);
  if (!Number.isInteger(value)) throw new UsageError(`${flag} must be a whole number, got '${text}'`);
  return value;
}

/** CPUs, memory and kernel of this machine, for a report header. */
export function machineDescription(): string {
  const cpus = os.cpus();
  return `${cpus.length} CPU × ${cpus[0]?.model ?? 'unknown'}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, ${os.type()} ${os.release()}`;
}

/** Runs a benchmark's `main` and exits with its status: 2 on a usage error, 1 when it throws. */
export function runBench(main: () => Promise<number>, usage: string): void {
  main().then(
    (status) => process.exit(status),
    (error: unknown) => {
      if (error instanceof UsageError) {
        if (error.message) console.error(error.message);
        console.error(usage);
        process.exit(error.message ? 2 : 0);
      }
      console.error('The benchmark failed:', error);
      process.exit(1);
    },
  );
}
