import { sql } from 'kysely'

/**
 * The users SQL that another feature's one-statement write on PostgreSQL embeds: a pet's owner
 * must be a user of its account (src/pets/pet-writes.ts). Elsewhere the check is a read through
 * the users service (findUser); test/pets/pet-writes-agreement.postgres.test.ts holds the two to
 * the same answers.
 */

/** Whether the user `owner` is one of the account `account_id`'s. */
export function userExists(p: (name: 'account_id' | 'owner') => unknown) {
  return sql<boolean>`exists (select 1 from users where users.account_id = ${p('account_id')} and users.id = ${p('owner')})`
}
