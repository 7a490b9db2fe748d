// Types of words.js, which the browser loads as it is (no build step) and the unit tests import.

export declare const REASONS: Record<string, string>;
export declare function reasonWords(code: string | null | undefined, none: string, prefix?: string): string;
export declare function holdWords(kind: string, chain: string): string;
export declare function pauseFromCheck(
  check: { ok?: boolean; message?: string } | null | undefined,
): { kind: string; since: string | null; message: string } | null;
