/** A request's status history, as the store keeps it and the core streams it. */
import type { RequestStatus, RequestStatusSnapshot } from './requestStatus.js';

/** One row of a request's status history; also an outbox entry for webhooks and event fan-out. */
export interface RequestEvent {
  /** Increases in commit order (see `outboxLock`), so a reader can resume after the last id it saw. */
  id: number;
  requestId: string;
  status: RequestStatus;
  /** The status record right after the change. */
  payload: RequestStatusSnapshot;
  createdAt: number;
}
