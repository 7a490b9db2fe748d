/** Who is asking: the API key of the call, when one was sent and is valid. */
export interface Caller {
  apiKey: {
    id: string;
    sponsorshipEnabled: boolean;
    /** Revenue share: business verification done and an EVM payout address on file. */
    revenueShareEligible: boolean;
    /** Most USD (micro) of fast fills awaiting their deposits at once; null when fast fill is not enabled. */
    fastFillLimitUsdMicros: bigint | null;
    /** The key's wallet (payout address, lower case): its fast fills are held against that app-fee balance. */
    payoutAddress?: string | null;
  } | null;
}
