import type { OperationInput, OperationOutput } from '../../../generated/openapi/operations.js';
import { authorizeAdmin } from '../../core/apiKeys/authorizeAdmin.js';
import { getInventory as getInventoryCore } from '../../core/inventory/inventory.js';
import { defaultInventorySettings } from '../../core/inventory/settings.js';
import type { RestContext } from '../context.js';
import { toWire } from '../wire.js';

/** GET /admin/inventory */
export async function getInventory(
  input: OperationInput<'getInventory'>,
  context: RestContext,
): Promise<OperationOutput<'getInventory'>> {
  authorizeAdmin(context.admin.token, input.headers.authorization);
  const report = await getInventoryCore(context.core, context.core.config.inventory ?? defaultInventorySettings);
  return {
    status: 200,
    body: {
      inventory: toWire(report.lines),
      short: toWire(report.short),
      plan: toWire(report.plan),
      reconciliation: toWire(report.reconciliation),
    },
  };
}
