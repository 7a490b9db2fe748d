import { costLimitPlugin } from '@escape.tech/graphql-armor-cost-limit';
import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesPlugin } from '@escape.tech/graphql-armor-max-directives';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import type { Plugin } from 'graphql-yoga';

/**
 * Limits on the shape of a GraphQL document, checked when it is parsed and validated, so a document over any of
 * them is refused whole before a single resolver runs (on HTTP and graphql-ws alike: both go through yoga's
 * envelop). A query is cheap to write and can be expensive to run: a few hundred aliased `quote` fields would
 * each store a request and read the chain.
 */
export interface DocumentLimits {
  /** Aliases per operation (fragments included). Default 15. */
  maxAliases: number;
  /** Depth of the selection tree (introspection excluded). Default 12. */
  maxDepth: number;
  /** graphql-armor's cost estimate (objects 2, scalars 1, times 1.5 per level). Default 5000. */
  maxCost: number;
  /** Lexical tokens of the document (checked while parsing, so a huge document stops early). Default 4000. */
  maxTokens: number;
  /** Directives per operation. Default 30. */
  maxDirectives: number;
}

export const defaultDocumentLimits: DocumentLimits = {
  maxAliases: 15,
  maxDepth: 12,
  maxCost: 5000,
  maxTokens: 4000,
  maxDirectives: 30,
};

/** graphql-armor's envelop plugins for `limits` (well-kept rules rather than our own visitors). */
export function documentLimitPlugins(limits: DocumentLimits): Plugin[] {
  return [
    maxTokensPlugin({ n: limits.maxTokens }),
    maxAliasesPlugin({ n: limits.maxAliases }),
    maxDepthPlugin({ n: limits.maxDepth }),
    costLimitPlugin({ maxCost: limits.maxCost }),
    maxDirectivesPlugin({ n: limits.maxDirectives }),
  ] as Plugin[];
}
