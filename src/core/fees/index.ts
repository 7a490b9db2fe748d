export * from './classifyRoute.js';
export * from './platformFee.js';
export * from './executionFee.js';
export * from './appFees.js';
export * from './sponsorship.js';
export * from './revenueShare.js';
