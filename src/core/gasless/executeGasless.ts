import { decodeFunctionData, isHex, serializeTransaction, zeroAddress, type Address, type Hex } from 'viem';
import { recoverAuthorizationAddress } from 'viem/utils';
import { drawSponsorship, getApiKey } from '../../store/apiKeys.repository.js';
import { insertGaslessSubmission, getGaslessSubmission } from '../../store/gaslessSubmissions.repository.js';
import { setCommittedOutflow } from '../../store/committedOutflow.repository.js';
import { incrementRateLimitCounter } from '../../store/rateLimitCounters.repository.js';
import { getRequest } from '../../store/requests.repository.js';
import { batchExecutorAbi, depositoryAbi, receiverAbi } from '../abi.js';
import { requireChain, requireCurrency } from '../chains/requireChain.js';
import type { ChainConfig } from '../chains/types.js';
import type { CoreContext } from '../context.js';
import { sponsorshipRemaining } from '../apiKeys/apiKey.js';
import { GatewayError, isGatewayError } from '../errors.js';
import { crashPoint } from '../faults.js';
import { parseAddress, parseInteger, parseUint } from '../inputs.js';
import { convert, toUsdMicros } from '../market.js';
import type { Caller } from '../vocabulary/caller.js';
import { judgeDeposit } from '../deposits/depositMatch.js';
import { committedOutflow } from '../fill/fillOutflow.js';
import { decodeRevert, revertDataOf } from './decodeRevert.js';
import { defaultGaslessSettings } from './settings.js';
import { withGasMargin } from '../gasMargin.js';
import { gaslessGasCap } from '../limits/gasCaps.js';
import { checkNoRecentExecutionRevert } from '../limits/executionReverts.js';
import type { JsonObject } from '../../records/json.js';
import { parseRequestId } from '../vocabulary/requestId.js';
import type { SignedAuthorizationInput } from '../ports/solver.js';
import { statusChangeOf, writeStatusChange } from '../status/statusChange.js';

export interface ExecuteGaslessParameters {
  executionKind: 'rawCalls';
  data: {
    chainId: number;
    to: string;
    data: string;
    value: string;
    authorizationList?: SignedAuthorizationInput[] | undefined;
  };
  executionOptions: { referrer?: string | undefined; subsidizeFees: boolean };
  requestId?: string | undefined;
  originGasOverhead?: number | string | undefined;
}

export interface ExecuteGaslessReturnType {
  message: string;
  requestId: string;
}

const MINUTE_MS = 60_000;

/** What the accepted batch is stored as (`gasless_submissions.payload`): everything needed to send it again. */
export interface GaslessPayload {
  to: Address;
  data: Hex;
  gas: string;
  authorizationList?: SignedAuthorizationInput[];
  /** The request's output before the origin gas was taken from it (restored if the batch is never sent). */
  quotedAmountOut: string;
  [key: string]: unknown;
}

/**
 * Gasless batches (`POST /execute`, `executionKind: "rawCalls"`): the reference SDK's `executeGaslessBatch` posts a
 * batch the user signed for the EIP-7702 batch executor (`contracts/BatchExecutor.sol`), with the authorization
 * that delegates the user's EOA to it. The gateway submits it from the solver's origin sender, which pays the gas.
 *
 * - Who pays: the batch must deposit for a known `waiting` request (the gateway pays gas only for its own
 *   customers' deposits). The origin gas (the simulation's estimate plus margin, plus `originGasOverhead`, at the
 *   current gas price) is recovered from that request: converted to the output currency and taken from its output
 *   before the fill, and shown in the request's actual fees (`originGas`). With `subsidizeFees` the caller's API key
 *   sponsors it instead (the key must have sponsorship enabled) and the output is untouched: the origin gas's USD
 *   value is drawn from the key's sponsorship allowance by the statement that checks it, in the transaction that
 *   accepts the batch (two racing batches cannot overdraw); a batch the remaining allowance cannot pay is
 *   `SPONSOR_BALANCE_TOO_LOW` and nothing is drawn or sent.
 * - Refused with a 4xx and nothing sent: a batch that is not a call of the executor's `execute`, an authorization for
 *   another contract or signed by someone else, a native `value`, no deposit in the calls, a deposit for an unknown,
 *   already paid or non-matching request, gas over the chain's cap (`maxGaslessGas`, else `maxGas`), output too
 *   small to pay the gas, per-key and per-user limits, a requester whose batch or fill with calls reverted on chain
 *   lately (429, `src/core/limits/executionReverts.ts`), and a batch whose simulation reverts (400
 *   `SIMULATION_FAILED` with the decoded revert). The simulation runs from the solver's sender with the fee caps the
 *   batch is sent with, so a batch that reads `tx.gasprice` is simulated as it will be mined.
 * - Idempotent and crash-safe: the batch is recorded (`gasless_submissions`) in the same transaction that moves the
 *   request to `depositing`, then sent through the sender (recorded before broadcast); the same batch posted again
 *   answers the same, and a restart sends an accepted batch that was not sent yet, once.
 * - Calls that depend on `tx.origin` see the solver's sender, not the user: unsupported.
 */
export async function executeGasless(
  ctx: CoreContext,
  params: ExecuteGaslessParameters,
  caller: Caller,
): Promise<ExecuteGaslessReturnType> {
  const settings = ctx.config.gasless ?? defaultGaslessSettings;
  const { data: tx, executionOptions } = params;
  // Every number and address of the body first, whatever the transport: a negative overhead would turn the origin
  // gas taken from the output into an addition to it (and into a refund of a sponsor's spent allowance).
  const overhead = parseUint(params.originGasOverhead ?? 0, 'originGasOverhead', { max: settings.maxGas });
  const value = parseUint(tx.value, 'value');
  const user = parseAddress(tx.to, 'to');
  const authorizationList = tx.authorizationList;
  for (const [index, authorization] of (authorizationList ?? []).entries())
    checkAuthorizationShape(authorization, index);
  const chain = requireChain(ctx, tx.chainId);
  const lifecycle = ctx.solving.running?.gasless;
  if (lifecycle === undefined)
    throw new GatewayError('SERVICE_UNAVAILABLE', 'The solver is not running on this gateway');
  const executor = chain.contracts.batchExecutor;
  if (executor === undefined) {
    throw new GatewayError(
      'UNSUPPORTED_CHAIN',
      `Gasless execution is not configured on chain ${chain.id} (no batch executor in its contracts)`,
    );
  }
  if (value !== 0n) {
    throw new GatewayError(
      'INVALID_INPUT',
      "value must be 0: the gateway does not send native value; the batch's calls spend the user's own balance",
      { data: 'value' },
    );
  }
  const key = caller.apiKey;
  if (executionOptions.subsidizeFees) {
    if (key === null) throw new GatewayError('UNAUTHORIZED', 'Unauthorized: subsidizeFees needs an x-api-key');
    if (!key.sponsorshipEnabled)
      throw new GatewayError('FORBIDDEN', 'Fee sponsorship (subsidizeFees) is not enabled for this API key');
  }
  // Counted before anything is read from the database or the chain: every attempt costs the caller one.
  await consumeLimit(ctx, key === null ? null : `gasless:key:${key.id}`, settings.keyPerMinute, 'API key');
  await consumeLimit(ctx, `gasless:user:${user.toLowerCase()}`, settings.userPerMinute, 'user');
  if (authorizationList !== undefined) await checkAuthorizations(authorizationList, { chain, executor, user });

  const deposit = findDeposit(chain, tx.data);
  if (params.requestId !== undefined && parseRequestId(params.requestId) !== deposit.requestId) {
    throw new GatewayError(
      'INVALID_INPUT',
      `The batch deposits for request ${deposit.requestId}, not for requestId ${params.requestId}`,
      { data: 'requestId' },
    );
  }
  const requestId = deposit.requestId;
  const request = await getRequest(ctx.db, requestId);
  if (request === undefined) throw new GatewayError('NOT_FOUND', `Request not found: ${requestId}`);

  const existing = await getGaslessSubmission(ctx.db, requestId);
  if (existing !== undefined) {
    const payload = existing.payload as unknown as GaslessPayload;
    if (payload.data.toLowerCase() === tx.data.toLowerCase() && existing.chainId === chain.id) {
      // The same batch again (a retry): it is sent at most once.
      if (request.status === 'depositing') await lifecycle.send(requestId as Hex);
      return { message: 'Transaction submitted', requestId };
    }
  }
  // After the retry of an accepted batch (answered the same): a new batch of a requester whose batch or fill with
  // calls reverted on chain lately is refused before it is simulated.
  await checkNoRecentExecutionRevert(ctx, { user, apiKeyId: key?.id ?? null }, 'Gasless batches');
  if (request.status !== 'waiting') {
    throw new GatewayError(
      'CONFLICT',
      `Conflict: request ${requestId} is already paid or being paid (status ${request.status})`,
    );
  }
  if (ctx.now() > request.expiresAt) {
    // The deposit would only be refunded, at the solver's cost.
    throw new GatewayError('INVALID_INPUT', `Request ${requestId} has expired; ask for a new quote`, {
      data: 'requestId',
    });
  }
  // The solver's own match rule, with the batch's account as the deposit's sender: a batch is sent only when its
  // deposit pays the order, so that the solver claims it as the order's own.
  const verdict = judgeDeposit(request, {
    chainId: chain.id,
    token: deposit.token,
    amount: deposit.amount,
    sender: user,
  });
  if (verdict.kind === 'stray' && verdict.why === 'other-chain') {
    throw new GatewayError('INVALID_INPUT', `Request ${requestId} is not paid on chain ${chain.id}`, {
      data: 'chainId',
    });
  }
  if (verdict.kind !== 'pays') {
    throw new GatewayError(
      'INVALID_INPUT',
      `The batch's deposit (${deposit.amount} of ${deposit.token}) does not pay the order (${request.amountIn} of ${request.originCurrency})`,
      { data: 'data' },
    );
  }
  if (request.user.toLowerCase() !== user.toLowerCase()) {
    throw new GatewayError('INVALID_INPUT', `The batch's account ${user} is not the order's user ${request.user}`, {
      data: 'to',
    });
  }

  const estimate = await simulate(ctx, {
    chainId: chain.id,
    to: user,
    data: tx.data as Hex,
    requestId,
    ...(authorizationList === undefined ? {} : { authorizationList }),
  });
  const gas = withGasMargin(estimate);
  const maxGas = gaslessGasCap(chain, settings);
  if (gas + overhead > maxGas) {
    throw new GatewayError(
      'INVALID_INPUT',
      `The batch needs ${gas + overhead} gas (originGasOverhead included), more than the gateway's cap of ${maxGas}`,
      { data: `maxGas=${maxGas}` },
    );
  }
  const gasPrice = await ctx.market.gasPrice(chain.id);
  // On an OP-stack origin the batch's transaction also pays an L1 data fee for its bytes, authorizations included.
  const l1Fee =
    chain.feeModel === 'op-stack'
      ? await ctx.market.l1DataFee(chain.id, batchTxBytes(chain, user, tx.data as Hex, authorizationList))
      : 0n;
  const nativeCost = (gas + overhead) * gasPrice + l1Fee;
  const sponsored = executionOptions.subsidizeFees;

  const destination = requireChain(ctx, request.destinationChainId);
  const outCurrency = requireCurrency(destination, request.destinationCurrency);
  const nativePrice = await ctx.market.usdPrice(chain.id, chain.nativeCurrency);
  const native = { decimals: chain.nativeCurrency.decimals, price: nativePrice };
  const recovered = sponsored
    ? 0n
    : convert(
        nativeCost,
        native,
        { decimals: outCurrency.decimals, price: await ctx.market.usdPrice(destination.id, outCurrency) },
        'up',
      );
  if (recovered >= request.amountOut) {
    throw new GatewayError(
      'AMOUNT_TOO_LOW',
      `The origin gas of the batch (${recovered} of the output currency) would take the whole output (${request.amountOut})`,
    );
  }
  const usdMicros = toUsdMicros(nativeCost, chain.nativeCurrency.decimals, nativePrice, 'up');
  const feesActual = withOriginGas(request.feesQuoted, {
    gasUnits: gas + overhead,
    gasPrice,
    l1Fee,
    nativeCost,
    usdMicros,
    recovered,
    inFeeCurrency: sponsored ? 0n : await inFeeCurrency(ctx, request.feesQuoted, nativeCost, native),
    sponsored,
    apiKeyId: sponsored ? key!.id : null,
  });
  const payload: GaslessPayload = {
    to: user,
    data: tx.data as Hex,
    gas: gas.toString(),
    ...(authorizationList === undefined ? {} : { authorizationList }),
    quotedAmountOut: request.amountOut.toString(),
  };
  const accepted = await ctx.db.transaction().execute(async (trx) => {
    const moved = await writeStatusChange(
      trx,
      statusChangeOf(request, 'startDeposit', { amountOut: request.amountOut - recovered, feesActual }, ctx.now()),
    );
    if (moved === null) return false;
    // The fill now pays the smaller output: what it will take from the solver follows (with the move, or neither).
    await setCommittedOutflow(trx, requestId, committedOutflow(moved));
    if (sponsored) {
      // Checked and drawn in one statement, in this transaction: a refusal rolls the request's move back.
      const remaining = await drawSponsorship(trx, key!.id, usdMicros);
      if (remaining === null) {
        const record = await getApiKey(trx, key!.id);
        const left = record === undefined ? 0n : sponsorshipRemaining(record);
        throw new GatewayError(
          'SPONSOR_BALANCE_TOO_LOW',
          `The origin gas of the batch (USD micros ${usdMicros}) is more than this API key's remaining sponsorship allowance (USD micros ${left}); nothing was sent`,
          { data: `remainingUsdMicros=${left}` },
        );
      }
    }
    await insertGaslessSubmission(trx, {
      requestId,
      chainId: chain.id,
      user,
      apiKeyId: key?.id ?? null,
      payload: payload as unknown as JsonObject,
      sponsoredUsdMicros: sponsored ? usdMicros : 0n,
      now: ctx.now(),
    });
    return true;
  });
  if (!accepted) throw new GatewayError('CONFLICT', `Conflict: request ${requestId} is already being paid`);
  ctx.log.info(
    {
      requestId,
      chainId: chain.id,
      user,
      gas: (gas + overhead).toString(),
      recovered: recovered.toString(),
      sponsored,
    },
    'gasless batch accepted',
  );
  crashPoint(ctx.config.crashAt, 'gasless-accepted');
  await lifecycle.send(requestId as Hex);
  return { message: 'Transaction submitted', requestId };
}

/** The numbers and addresses of one signed authorization, before its signature is looked at. */
function checkAuthorizationShape(authorization: SignedAuthorizationInput, index: number): void {
  const field = `authorizationList[${index}]`;
  parseInteger(authorization.chainId, `${field}.chainId`, 0, Number.MAX_SAFE_INTEGER);
  parseInteger(authorization.nonce, `${field}.nonce`, 0, Number.MAX_SAFE_INTEGER);
  parseInteger(authorization.yParity, `${field}.yParity`, 0, 1);
  parseAddress(authorization.address, `${field}.address`);
  for (const part of ['r', 's'] as const) {
    if (!BYTES32.test(authorization[part])) {
      throw new GatewayError('INVALID_INPUT', `${field}.${part} must be 0x followed by 64 hex digits`, {
        data: `${field}.${part}`,
      });
    }
  }
}

const BYTES32 = /^0x[0-9a-fA-F]{64}$/;

async function checkAuthorizations(
  list: SignedAuthorizationInput[],
  { chain, executor, user }: { chain: ChainConfig; executor: Address; user: Address },
): Promise<void> {
  if (list.length !== 1)
    throw new GatewayError('INVALID_INPUT', 'authorizationList must hold exactly one authorization (for data.to)', {
      data: 'authorizationList',
    });
  const [authorization] = list as [SignedAuthorizationInput];
  if (authorization.address.toLowerCase() !== executor.toLowerCase()) {
    throw new GatewayError(
      'INVALID_INPUT',
      `The authorization delegates to ${authorization.address}; this gateway executes batches only for its batch executor ${executor}`,
      { data: 'authorizationList' },
    );
  }
  if (authorization.chainId !== chain.id && authorization.chainId !== 0) {
    throw new GatewayError(
      'INVALID_INPUT',
      `The authorization is for chain ${authorization.chainId}, not ${chain.id}`,
      {
        data: 'authorizationList',
      },
    );
  }
  let signer: Address;
  try {
    signer = await recoverAuthorizationAddress({
      authorization: {
        address: authorization.address,
        chainId: authorization.chainId,
        nonce: authorization.nonce,
        r: authorization.r,
        s: authorization.s,
        yParity: authorization.yParity,
      },
    });
  } catch {
    throw new GatewayError('INVALID_INPUT', 'The authorization signature is malformed', { data: 'authorizationList' });
  }
  if (signer.toLowerCase() !== user.toLowerCase()) {
    throw new GatewayError('INVALID_INPUT', `The authorization is signed by ${signer}, not by data.to (${user})`, {
      data: 'authorizationList',
    });
  }
}

interface FoundDeposit {
  requestId: string;
  token: string;
  amount: bigint;
}

/** The batch's deposit into the gateway (depository or receiver); refuses batches with none, or with two. */
function findDeposit(chain: ChainConfig, data: string): FoundDeposit {
  if (!isHex(data)) throw new GatewayError('INVALID_INPUT', 'data must be hex calldata', { data: 'data' });
  let calls: ReadonlyArray<{ to: Address; value: bigint; data: Hex }>;
  try {
    const decoded = decodeFunctionData({ abi: batchExecutorAbi, data });
    if (decoded.functionName !== 'execute') throw new Error('not execute');
    calls = decoded.args[0].batchedCall.calls;
  } catch {
    throw new GatewayError(
      'INVALID_INPUT',
      "data must be a call of the batch executor's execute(SignedBatchedCall, bytes), as the SDK's executeGaslessBatch sends",
      { data: 'data' },
    );
  }
  const found: FoundDeposit[] = [];
  for (const call of calls) {
    const to = call.to.toLowerCase();
    try {
      if (to === chain.contracts.depository.toLowerCase()) {
        const decoded = decodeFunctionData({ abi: depositoryAbi, data: call.data });
        if (decoded.functionName === 'depositErc20') {
          const [, token, amount, id] = decoded.args;
          found.push({ requestId: id.toLowerCase(), token, amount });
        } else if (decoded.functionName === 'depositNative') {
          found.push({ requestId: decoded.args[1].toLowerCase(), token: zeroAddress, amount: call.value });
        }
      } else if (to === chain.contracts.receiver.toLowerCase()) {
        const decoded = decodeFunctionData({ abi: receiverAbi, data: call.data });
        found.push({ requestId: decoded.args[0].toLowerCase(), token: zeroAddress, amount: call.value });
      }
    } catch {
      // Not a deposit function of ours: not a deposit.
    }
  }
  if (found.length === 0) {
    throw new GatewayError(
      'INVALID_INPUT',
      "The batch makes no deposit into the gateway: gasless execution pays only for the deposit of a quote's request",
      { data: 'data' },
    );
  }
  if (found.length > 1)
    throw new GatewayError('INVALID_INPUT', 'The batch makes more than one deposit; send one per request', {
      data: 'data',
    });
  return found[0]!;
}

async function consumeLimit(ctx: CoreContext, bucket: string | null, perMinute: number, who: string): Promise<void> {
  if (bucket === null) return;
  const now = ctx.now();
  const windowStart = Math.floor(now / MINUTE_MS) * MINUTE_MS;
  const count = await incrementRateLimitCounter(ctx.db, { bucket, windowStart, by: 1 });
  if (count > perMinute) {
    throw new GatewayError(
      'RATE_LIMITED',
      `Too many gasless submissions for this ${who}: at most ${perMinute} per minute`,
      { data: `retryAfterSeconds=${Math.max(1, Math.ceil((windowStart + MINUTE_MS - now) / 1000))}` },
    );
  }
}

/** Simulates the batch from the solver's sender with the authorization; its gas, or a 400 with the decoded revert. */
async function simulate(
  ctx: CoreContext,
  tx: { chainId: number; to: Address; data: Hex; requestId: string; authorizationList?: SignedAuthorizationInput[] },
): Promise<bigint> {
  try {
    return await ctx.market.estimateGas(tx.chainId, {
      from: ctx.config.solverAddress,
      to: tx.to,
      data: tx.data,
      value: 0n,
      ...(tx.authorizationList === undefined ? {} : { authorizationList: tx.authorizationList }),
    });
  } catch (error) {
    if (!isGatewayError(error) || error.code !== 'DESTINATION_TX_FAILED') throw error;
    const revert = decodeRevert(revertDataOf(error.cause));
    throw new GatewayError('SIMULATION_FAILED', `The batch reverts in simulation: ${revert.message}`, {
      data: revert.label,
      cause: error,
      body: { error: revert.label, requestId: tx.requestId, details: { revert } },
    });
  }
}

/** The actual fees of a gasless request: the quoted ones with the origin gas added to execution (unless sponsored). */
function withOriginGas(
  quoted: JsonObject,
  gas: {
    gasUnits: bigint;
    gasPrice: bigint;
    /** The L1 data fee (wei) on an OP-stack origin, in `nativeCost`; 0 elsewhere. */
    l1Fee: bigint;
    nativeCost: bigint;
    usdMicros: bigint;
    recovered: bigint;
    /** The origin gas in the fee currency (0 when sponsored). */
    inFeeCurrency: bigint;
    sponsored: boolean;
    apiKeyId: string | null;
  },
): JsonObject {
  const originGas: JsonObject = {
    gasUnits: gas.gasUnits.toString(),
    gasPrice: gas.gasPrice.toString(),
    ...(gas.l1Fee === 0n ? {} : { l1Fee: gas.l1Fee.toString() }),
    amount: gas.nativeCost.toString(),
    usdMicros: gas.usdMicros.toString(),
    recoveredFromOutput: gas.recovered.toString(),
    sponsored: gas.sponsored,
    sponsorApiKeyId: gas.apiKeyId,
  };
  if (gas.sponsored) return { ...quoted, originGas };
  const usd = (quoted.usdMicros ?? {}) as JsonObject;
  return {
    ...quoted,
    execution: (amountOf(quoted.execution) + gas.inFeeCurrency).toString(),
    usdMicros: { ...usd, execution: (amountOf(usd.execution) + gas.usdMicros).toString() },
    originGas,
  };
}

/** `nativeCost` in the request's fee currency (rounded up); 0 when the stored fees name no known currency. */
async function inFeeCurrency(
  ctx: CoreContext,
  quoted: JsonObject,
  nativeCost: bigint,
  native: { decimals: number; price: { answer: bigint; decimals: number; updatedAt: number } },
): Promise<bigint> {
  const currency = quoted.currency as { chainId?: number; address?: string } | undefined;
  if (currency?.chainId === undefined || currency.address === undefined) return 0n;
  const feeChain = requireChain(ctx, currency.chainId);
  const feeCurrency = requireCurrency(feeChain, currency.address);
  return convert(
    nativeCost,
    native,
    { decimals: feeCurrency.decimals, price: await ctx.market.usdPrice(feeChain.id, feeCurrency) },
    'up',
  );
}

/** A stored amount (a decimal string or a safe integer); 0 when absent. */
const amountOf = (value: unknown): bigint =>
  typeof value === 'string' || typeof value === 'number' ? BigInt(value) : 0n;

/**
 * The batch's transaction as the gateway sends it (to the user's account, with the authorizations), unsigned, with
 * the widest nonce, gas and fee fields: the bytes an OP-stack origin's L1 data fee is priced on.
 */
function batchTxBytes(
  chain: ChainConfig,
  user: Address,
  data: Hex,
  authorizationList: SignedAuthorizationInput[] | undefined,
): Hex {
  const common = {
    chainId: chain.id,
    nonce: 0xff_ff_ff,
    gas: 2n ** 32n - 1n,
    maxFeePerGas: 2n ** 40n - 1n,
    maxPriorityFeePerGas: 2n ** 40n - 1n,
    to: user,
    value: 0n,
    data,
  };
  return authorizationList === undefined || authorizationList.length === 0
    ? serializeTransaction({ type: 'eip1559', ...common })
    : serializeTransaction({
        type: 'eip7702',
        ...common,
        authorizationList: authorizationList.map((authorization) => ({
          address: authorization.address,
          chainId: authorization.chainId,
          nonce: authorization.nonce,
          yParity: authorization.yParity,
          r: authorization.r,
          s: authorization.s,
        })),
      });
}
