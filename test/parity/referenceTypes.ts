/**
 * Compile-time parity with the reference's published API types (`paths` of `@relayprotocol/relay-sdk`, which
 * its UI kit and hooks read the wire through) against this gateway's contract (`generated/openapi/types.ts`).
 * `npm run typecheck` (tsc over test/) fails when a row drifts: a key the reference's clients read that we do
 * not declare, or a value of a type they cannot take.
 *
 * Rules of the comparison: "declares every key" compares key sets (the reference marks nearly everything
 * optional, so plain assignability would accept a missing key); JSON `null` where the reference says optional
 * is taken as absent (`Present<T>`). Deliberate differences are listed in docs/api-notes.md.
 */
import type { paths as ReferencePaths } from '@relayprotocol/relay-sdk';
import type { components, paths as OurPaths } from '../../generated/openapi/types.js';

type Schemas = components['schemas'];
type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
type Ok<P extends keyof ReferencePaths, M extends keyof ReferencePaths[P]> = ReferencePaths[P][M] extends {
  responses: { 200: infer R };
}
  ? Json<R>
  : never;
type OurOk<P extends keyof OurPaths, M extends keyof OurPaths[P]> = OurPaths[P][M] extends {
  responses: { 200: infer R };
}
  ? Json<R>
  : never;
type Query<Paths, P extends keyof Paths> = Paths[P] extends { get: { parameters: { query?: infer Q } } }
  ? NonNullable<Q>
  : never;
type Present<T> = Exclude<T, null | undefined>;
type Element<T> = T extends ReadonlyArray<infer E> ? E : never;

/** Keys the reference declares that we do not: must be `never`. */
export type MissingKeys<Ours, Reference> = Exclude<keyof Present<Reference>, keyof Present<Ours>>;
/** Compiles only for `never`; the error names what is missing. */
export type ExpectNone<T extends never> = T;
/** Compiles only when `Ours` can be read as `Reference`. */
export type ExpectAssignable<Ours extends Reference, Reference> = Ours;

// Quote: `details.expandedPriceImpact` (the UI kit reads `.relay.usd`) and `feeSponsorship`.
type RefQuote = Ok<'/quote/v2', 'post'>;
type RefImpact = Present<Present<RefQuote['details']>['expandedPriceImpact']>;
export type QuoteImpactKeys = ExpectNone<MissingKeys<Schemas['ExpandedPriceImpact'], RefImpact>>;
type RefSponsorship = Present<Present<RefQuote['feeSponsorship']>['quoted']>;
export type SponsorshipComponentKeys = ExpectNone<
  MissingKeys<Schemas['FeeSponsorshipPhase']['components'], RefSponsorship['components']>
>;
export type SponsorshipSelectsRelay = ExpectAssignable<'relay', Schemas['SponsoredFeeComponent']>;

// Chains: `contracts.relayReceiver`.
type RefChain = Element<Present<Ok<'/chains', 'get'>['chains']>>;
export type ChainContractKeys = ExpectNone<MissingKeys<Schemas['ChainContracts'], Present<RefChain['contracts']>>>;

// /requests/v2: `data.fees` / `feesUsd` keys and `data.expandedPriceImpact`.
type RefRequestV2 = Element<Present<Ok<'/requests/v2', 'get'>['requests']>>;
type RefDataV2 = Present<RefRequestV2['data']>;
export type RequestV2FeeKeys = ExpectNone<MissingKeys<Schemas['RequestV2Fees'], RefDataV2['fees']>>;
export type RequestV2FeeUsdKeys = ExpectNone<MissingKeys<Schemas['RequestV2FeesUsd'], RefDataV2['feesUsd']>>;
export type RequestV2ImpactKeys = ExpectNone<
  MissingKeys<Schemas['ExpandedPriceImpact'], Present<Present<RefDataV2['expandedPriceImpact']>['quoted']>>
>;

// /requests/v3 and v2: every query parameter the reference declares is declared here (applied, or refused
// with a 400 naming it), so none is silently ignored.
export type RequestsV3Query = ExpectNone<
  MissingKeys<Query<OurPaths, '/requests/v3'>, Query<ReferencePaths, '/requests/v3'>>
>;
export type RequestsV3Fees = ExpectNone<
  MissingKeys<
    Schemas['RequestFeeBreakdownV3'],
    Present<Present<Present<Element<Present<Ok<'/requests/v3', 'get'>['requests']>>['data']>['fees']>['quoted']>
  >
>;

// Status: v3 `details` is text; the v2 operation exists with the reference's keys and statuses.
export type StatusV3Details = ExpectAssignable<
  Present<OurOk<'/intents/status/v3', 'get'>['details']>,
  Present<Ok<'/intents/status/v3', 'get'>['details']>
>;
export type StatusV2Keys = ExpectNone<MissingKeys<OurOk<'/intents/status/v2', 'get'>, Ok<'/intents/status/v2', 'get'>>>;
export type StatusV2Status = ExpectAssignable<
  OurOk<'/intents/status/v2', 'get'>['status'],
  Present<Ok<'/intents/status/v2', 'get'>['status']>
>;
export type StatusV2Details = ExpectAssignable<
  Present<OurOk<'/intents/status/v2', 'get'>['details']>,
  Present<Ok<'/intents/status/v2', 'get'>['details']>
>;

// Operations integrators call: present, with the reference's keys and types.
type RefSignatureV2 = Ok<'/requests/{requestId}/signature/v2', 'get'>;
type OurSignatureV2 = OurOk<'/requests/{requestId}/signature/v2', 'get'>;
export type SignatureV2Keys = ExpectNone<MissingKeys<OurSignatureV2['requestData'], RefSignatureV2['requestData']>>;
export type SignatureV2Types = ExpectAssignable<OurSignatureV2, Present<RefSignatureV2>>;
export type TokenPriceV2 = ExpectAssignable<
  OurOk<'/currencies/token/price/v2', 'get'>,
  Ok<'/currencies/token/price/v2', 'get'>
>;
export type TrendingItemKeys = ExpectNone<
  MissingKeys<Element<OurOk<'/currencies/trending', 'get'>>, Element<Ok<'/currencies/trending', 'get'>>>
>;
export type TrendingQuery = ExpectNone<
  MissingKeys<Query<OurPaths, '/currencies/trending'>, Query<ReferencePaths, '/currencies/trending'>>
>;
export type ChainHealth = ExpectAssignable<OurOk<'/chains/health', 'get'>, Ok<'/chains/health', 'get'>>;

/** The reference's response types, for the runtime suite to type what it reads. */
export type ReferenceQuote = RefQuote;
export type ReferenceChains = Ok<'/chains', 'get'>;
export type ReferenceRequestsV2 = Ok<'/requests/v2', 'get'>;
export type ReferenceRequestsV3 = Ok<'/requests/v3', 'get'>;
export type ReferenceStatusV2 = Ok<'/intents/status/v2', 'get'>;
export type ReferenceStatusV3 = Ok<'/intents/status/v3', 'get'>;
export type ReferenceSignatureV2 = RefSignatureV2;
export type ReferenceTokenPriceV2 = Ok<'/currencies/token/price/v2', 'get'>;
export type ReferenceTrending = Ok<'/currencies/trending', 'get'>;
export type ReferenceChainHealth = Ok<'/chains/health', 'get'>;

// The comparisons above would pass vacuously if a reference type resolved to `never` (a path renamed in a
// new SDK release): each one used is checked to be a real object type.
type IsObject<T> = [Present<T>] extends [never] ? false : [Present<T>] extends [object] ? true : false;
type ExpectAllTrue<T extends readonly true[]> = T;
export type NonVacuous = ExpectAllTrue<
  [
    IsObject<RefImpact>,
    IsObject<RefSponsorship['components']>,
    IsObject<Present<RefChain['contracts']>>,
    IsObject<RefDataV2['fees']>,
    IsObject<Query<ReferencePaths, '/requests/v3'>>,
    IsObject<Ok<'/intents/status/v2', 'get'>>,
    IsObject<RefSignatureV2['requestData']>,
    IsObject<Element<Ok<'/currencies/trending', 'get'>>>,
    IsObject<Ok<'/chains/health', 'get'>>,
  ]
>;
