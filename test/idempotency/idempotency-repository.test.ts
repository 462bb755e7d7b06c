import { sql } from 'kysely'
import { expect, it } from 'vitest'
import { claimKey } from '../../src/idempotency/idempotency-repository.ts'
import { useTestApp } from '../helpers/app.ts'
import { DIALECT, describeDb } from '../helpers/database.ts'

/** The SQL of an Idempotency-Key's claim (src/idempotency/idempotency-repository.ts). */
describeDb('claiming an Idempotency-Key in a transaction', () => {
  const t = useTestApp({ DB_LOCK_TIMEOUT_SECONDS: '7' })

  // Behind a pooler the transaction's bound is its own (SET LOCAL), not the session's default,
  // which is the role's there (docs/operations.md, "Running behind PgBouncer").
  it.runIf(DIALECT === 'postgres')(
    "bounds the wait for the key's holder alone, then gives the transaction back its own lock_timeout",
    async () => {
      const { accountId } = await t.newAccount()
      const after = await t.database.db.transaction().execute(async (trx) => {
        const at = new Date().toISOString()
        const taken = await claimKey(trx, {
          accountId,
          key: 'bounded-wait',
          fingerprint: 'f',
          at,
          expiredBefore: at,
          lockTimeoutMs: 250,
        })
        expect(taken).toBe(true)
        return (await sql<{ v: string }>`select current_setting('lock_timeout') as v`.execute(trx)).rows[0]?.v
      })
      expect(after).toBe('7s')
    },
  )
})
