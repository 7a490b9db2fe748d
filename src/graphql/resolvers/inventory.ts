import type { QueryResolvers } from '../../../generated/graphql/resolvers.js';
import { authorizeAdmin } from '../../core/apiKeys/authorizeAdmin.js';
import { getInventory } from '../../core/inventory/inventory.js';
import { defaultInventorySettings } from '../../core/inventory/settings.js';

/** `Query.inventory` (operation `getInventory`, admin): the same core and admin check as `GET /admin/inventory`. */
export const inventory: QueryResolvers['inventory'] = async (_parent, _args, { core, admin }) => {
  authorizeAdmin(admin.token, admin.authorization);
  const report = await getInventory(core, core.config.inventory ?? defaultInventorySettings);
  return { inventory: report.lines, short: report.short, plan: report.plan, reconciliation: report.reconciliation };
};
