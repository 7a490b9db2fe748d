/** How long a requester whose transactions reverted on chain is refused (`GATEWAY_EXECUTION_REVERT_COOLDOWN_SECONDS`). */
export interface ExecutionRevertSettings {
  /** Seconds after a fill with calls or a gasless batch of a requester reverted on chain; 0 turns the bar off. */
  cooldownSeconds: number;
}

export const defaultExecutionRevertSettings: ExecutionRevertSettings = { cooldownSeconds: 3_600 };
