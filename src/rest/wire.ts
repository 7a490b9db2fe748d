import { jsonify, type Jsonified } from '../core/json.js';

/** The wire form of a core value: every bigint (an amount in smallest units) becomes a decimal string. */
export type Wire<T> = Jsonified<T>;

/** Converts a core value to its JSON wire form. */
export const toWire = <T>(value: T): Wire<T> => jsonify(value);
