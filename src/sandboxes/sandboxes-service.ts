import {
  type AccountRow,
  findAccountById,
  findOrCreateSandbox,
  findSandboxOf,
  modeOf,
} from '../accounts/accounts-service.ts'
import type { Db } from '../db/schema.ts'
import { deleteAllEventsOfAccount } from '../events/events-service.ts'
import { deleteAllIdempotencyKeysOfAccount } from '../idempotency/idempotency.ts'
import { deleteAllOrdersOfAccount } from '../orders/orders-service.ts'
import { deleteAllPetsOfAccount } from '../pets/pets-service.ts'
import { deleteAllUsersOfAccount } from '../users/users-service.ts'
import { deleteAllDeliveriesOfAccount } from '../webhooks/webhooks-service.ts'

/**
 * Sandboxes: each live account may have one, a separate account linked to it
 * (`accounts.live_account_id`). Everything scoped to an account (pets, users, orders, keys, OAuth
 * apps, webhook endpoints, events) is therefore the sandbox's own, and never the live account's.
 */

/** The live account's sandbox, created on first use (a second call answers the same one). */
export async function openSandbox(
  db: Db,
  liveAccountId: string,
): Promise<{ sandbox: AccountRow; created: boolean }> {
  const live = await findAccountById(db, liveAccountId)
  if (live === undefined) throw new Error(`no account ${liveAccountId}`)
  // A sandbox has no sandbox of its own: the pair is always live + sandbox.
  if (modeOf(live) === 'sandbox')
    throw new Error(`${liveAccountId} is a sandbox; only live accounts have one`)
  const { account, created } = await findOrCreateSandbox(db, liveAccountId)
  return { sandbox: account, created }
}

export { findSandboxOf }

/**
 * Deletes all of a sandbox's data (pets and their images, users, orders, events, webhook
 * deliveries and the stored answers of `Idempotency-Key`s) in one transaction, and keeps what an
 * integration is configured with: its API keys, OAuth apps and webhook endpoints (with their
 * secrets). Ids keep counting up from where they were, so an id seen before the reset never
 * names a different object after it. Refuses a live account.
 */
export async function resetSandbox(db: Db, sandboxId: string): Promise<void> {
  const sandbox = await findAccountById(db, sandboxId)
  if (sandbox === undefined || modeOf(sandbox) !== 'sandbox') {
    throw new Error(`${sandboxId} is not a sandbox: only a sandbox can be reset`)
  }
  await db.transaction().execute(async (trx) => {
    await deleteAllDeliveriesOfAccount(trx, sandboxId)
    await deleteAllEventsOfAccount(trx, sandboxId)
    await deleteAllOrdersOfAccount(trx, sandboxId)
    // Pets name their owners, so they go before the users.
    await deleteAllPetsOfAccount(trx, sandboxId)
    await deleteAllUsersOfAccount(trx, sandboxId)
    await deleteAllIdempotencyKeysOfAccount(trx, sandboxId)
  })
}
