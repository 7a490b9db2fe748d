/**
 * `GET /requests/{requestId}/signature` and GraphQL `requestSignature` on a real gateway and devnet: a request
 * made by a real `POST /quote/v2` is attested with the solver key; the signature recovers to the solver with viem,
 * the deployed AttestationVerifier accepts it on every chain, and changing any one signed field makes both
 * viem and the contract reject it. Unknown ids are 404 (REST) / null (GraphQL); malformed ids are 400.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createPublicClient,
  encodeAbiParameters,
  http,
  keccak256,
  pad,
  parseAbiParameters,
  parseUnits,
  recoverMessageAddress,
  toHex,
  verifyMessage,
  zeroAddress,
  type Address,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { attestationVerifierAbi } from '../../generated/contracts/index.js';
import { devnetViemChain, type DevnetChain } from '../../src/chain/devnet.js';
import { attestationHash, getRequestSignature } from '../../src/core/requests/getRequestSignature.js';
import { getRequest } from '../../src/store/requests.repository.js';
import { post } from '../graphql/harness.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let gateway: TestGateway;
let chainA: DevnetChain;
let chainB: DevnetChain;
let requestId: Hex;
const amount = parseUnits('25', 6);

const account = (i: number) => gateway.devnet.descriptor.accounts[i]!;
const usdc = (chain: DevnetChain): Address => chain.tokens.find((t) => t.id === 'usdc')!.address;
const lower = (value: string) => value.toLowerCase();

beforeAll(async () => {
  gateway = await startTestGateway();
  [chainA, chainB] = gateway.devnet.descriptor.chains as [DevnetChain, DevnetChain];
  const { status, body } = await call(gateway.url, 'getQuote', {
    body: {
      user: account(0).address,
      recipient: account(2).address,
      originChainId: chainA.chainId,
      destinationChainId: chainB.chainId,
      originCurrency: usdc(chainA),
      destinationCurrency: usdc(chainB),
      amount: amount.toString(),
      tradeType: 'EXACT_INPUT',
    },
  });
  expect(status, JSON.stringify(body)).toBe(200);
  requestId = body.steps.at(-1).requestId;
}, 120_000);
afterAll(async () => {
  await gateway?.stop();
});

/** The signed fields in the contract's argument order. */
interface Fields {
  requestId: Hex;
  originChainId: bigint;
  originUser: Hex;
  originCurrency: Hex;
  originAmount: bigint;
  destinationChainId: bigint;
  destinationUser: Hex;
}
const argsOf = (f: Fields) =>
  [
    f.requestId,
    f.originChainId,
    f.originUser,
    f.originCurrency,
    f.originAmount,
    f.destinationChainId,
    f.destinationUser,
  ] as const;
/** Written out here rather than taken from the code under test: keccak256(abi.encode(...)), addresses padded. */
const hashOf = (f: Fields) =>
  keccak256(
    encodeAbiParameters(parseAbiParameters('bytes32, uint256, bytes32, bytes32, uint256, uint256, bytes32'), argsOf(f)),
  );

async function getSignature(id: string) {
  return call(gateway.url, 'getRequestSignature', { path: `/requests/${id}/signature` });
}

async function attested(): Promise<{ fields: Fields; signature: Hex; body: any }> {
  const { status, body } = await getSignature(requestId);
  expect(status, JSON.stringify(body)).toBe(200);
  const d = body.requestData;
  const fields: Fields = {
    requestId,
    originChainId: BigInt(d.originChainId),
    originUser: pad(d.originUser as Hex),
    originCurrency: pad(d.originCurrency as Hex),
    originAmount: BigInt(d.originAmount),
    destinationChainId: BigInt(d.destinationChainId),
    destinationUser: pad(d.destinationUser as Hex),
  };
  return { fields, signature: body.signature, body };
}

const verifyOnChain = (chain: DevnetChain, f: Fields, signature: Hex) =>
  createPublicClient({ chain: devnetViemChain(chain), transport: http(chain.rpcUrl) }).readContract({
    address: chain.contracts.attestationVerifier,
    abi: attestationVerifierAbi,
    functionName: 'verify',
    args: [...argsOf(f), signature],
  });

describe('GET /requests/{requestId}/signature', () => {
  it('attests the stored request: origin user, currency, amount, recipient', async () => {
    const { body } = await attested();
    expect(body.requestData).toEqual({
      originChainId: chainA.chainId,
      originUser: lower(account(0).address),
      originCurrency: lower(usdc(chainA)),
      originAmount: amount.toString(),
      originTransferDestination: lower(chainA.contracts.depository),
      destinationChainId: chainB.chainId,
      destinationUser: lower(account(2).address),
    });
    const stored = await getRequest(gateway.server.database.db, requestId);
    expect(stored?.amountIn).toBe(amount);
    expect(body.signature).toMatch(/^0x[0-9a-f]{130}$/);
  });

  it('is signed by the solver over keccak256(abi.encode(...)) as a personal message, deterministically', async () => {
    const { fields, signature } = await attested();
    const hash = hashOf(fields);
    const solver = gateway.devnet.descriptor.solver.address;
    expect(await recoverMessageAddress({ message: { raw: hash }, signature })).toBe(solver);
    expect(await verifyMessage({ address: solver, message: { raw: hash }, signature })).toBe(true);
    // The exported pure hash agrees with the hand-written one.
    const { body } = await getSignature(requestId);
    expect(
      attestationHash(requestId, { ...body.requestData, originAmount: BigInt(body.requestData.originAmount) }),
    ).toBe(hash);
    // RFC 6979: the same bytes every time, whatever the id's letter case.
    expect((await getSignature(requestId)).body.signature).toBe(signature);
    expect((await getSignature(`0x${requestId.slice(2).toUpperCase()}`)).body.signature).toBe(signature);
  });

  it('is accepted by the deployed AttestationVerifier on every devnet chain, which hashes the same way', async () => {
    const { fields, signature } = await attested();
    for (const chain of gateway.devnet.descriptor.chains) {
      expect(await verifyOnChain(chain, fields, signature), chain.name).toBe(true);
    }
    const onChainHash = await createPublicClient({
      chain: devnetViemChain(chainA),
      transport: http(chainA.rpcUrl),
    }).readContract({
      address: chainA.contracts.attestationVerifier,
      abi: attestationVerifierAbi,
      functionName: 'attestationHash',
      args: argsOf(fields),
    });
    expect(onChainHash).toBe(hashOf(fields));
  });

  const tampered: Array<[keyof Fields, (f: Fields) => Fields]> = [
    ['requestId', (f) => ({ ...f, requestId: keccak256(toHex('another request')) })],
    ['originChainId', (f) => ({ ...f, originChainId: f.originChainId + 1n })],
    ['originUser', (f) => ({ ...f, originUser: pad(account(1).address) })],
    ['originCurrency', (f) => ({ ...f, originCurrency: pad(zeroAddress) })],
    ['originAmount', (f) => ({ ...f, originAmount: f.originAmount + 1n })],
    ['destinationChainId', (f) => ({ ...f, destinationChainId: f.destinationChainId + 1n })],
    ['destinationUser', (f) => ({ ...f, destinationUser: pad(account(3).address) })],
  ];
  it.each(tampered)('is rejected by viem and on chain when %s is changed', async (_field, tamper) => {
    const { fields, signature } = await attested();
    const forged = tamper(fields);
    const solver = gateway.devnet.descriptor.solver.address;
    expect(await recoverMessageAddress({ message: { raw: hashOf(forged) }, signature })).not.toBe(solver);
    expect(await verifyMessage({ address: solver, message: { raw: hashOf(forged) }, signature })).toBe(false);
    expect(await verifyOnChain(chainA, forged, signature)).toBe(false);
  });

  it('is rejected on chain when signed by another key', async () => {
    const { fields } = await attested();
    const other = await privateKeyToAccount(account(0).privateKey).signMessage({ message: { raw: hashOf(fields) } });
    expect(await verifyOnChain(chainA, fields, other)).toBe(false);
  });

  it('answers 404 NOT_FOUND for an unknown request and 400 INVALID_INPUT for a malformed id', async () => {
    const unknown = keccak256(toHex('never quoted'));
    const missing = await getSignature(unknown);
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ errorCode: 'NOT_FOUND', statusCode: 404 });

    for (const bad of ['0x01', 'not-an-id', `${requestId}00`]) {
      const { status, body } = await getSignature(bad);
      expect(status, bad).toBe(400);
      expect(body).toMatchObject({ errorCode: 'INVALID_INPUT', statusCode: 400 });
    }
  });

  it('checks the id in the core too (for transports without the REST validator)', async () => {
    await expect(getRequestSignature(gateway.server.core, { requestId: '0x01' })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      status: 400,
    });
    await expect(
      getRequestSignature(gateway.server.core, { requestId: keccak256(toHex('none')) }),
    ).rejects.toMatchObject({
      code: 'NOT_FOUND',
      status: 404,
    });
  });
});

describe('GraphQL requestSignature', () => {
  const query = `query($id: ID!) {
    requestSignature(requestId: $id) {
      requestData { originChainId originUser originCurrency originAmount destinationChainId destinationUser }
      signature
    }
  }`;

  it('returns the same attestation as REST', async () => {
    const { body: rest } = await attested();
    const { status, body } = await post(gateway.url, query, { id: requestId });
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    const { originTransferDestination: _, ...signed } = rest.requestData;
    expect(body.data.requestSignature).toEqual({ requestData: signed, signature: rest.signature });
  });

  it('is null for an unknown request and INVALID_INPUT for a malformed id', async () => {
    const unknown = await post(gateway.url, query, { id: keccak256(toHex('never quoted')) });
    expect(unknown.body).toEqual({ data: { requestSignature: null } });

    const malformed = await post(gateway.url, query, { id: '0x01' });
    expect(malformed.body.data).toEqual({ requestSignature: null });
    expect(malformed.body.errors?.map((e) => e.extensions?.code)).toEqual(['INVALID_INPUT']);
  });
});
