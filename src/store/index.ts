// The storage layer: open the database, run migrations, and one repository function per query.
export * from './database.js';
export * from './errors.js';
export type * from './tables.js';
export * from './requests.repository.js';
export * from './requestEvents.repository.js';
export * from './cursors.repository.js';
export * from './deposits.repository.js';
export * from './outgoingTxs.repository.js';
export * from './apiKeys.repository.js';
export * from './requestWriter.js';
