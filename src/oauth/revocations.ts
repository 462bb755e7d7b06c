import type { Db } from '../db/schema.ts'
import { nowIso } from '../lib/time.ts'

export interface RevocationListOptions {
  /** How often other instances' revocations are read; bounds how late they take effect. */
  pollMs: number
  onError?: (error: unknown) => void
}

/**
 * What has been revoked before its tokens expire: `jti:…` (one JWT access token), `grant:…` (every
 * token of a grant: a reused refresh token, a revoked refresh token) and `client:…` (a deleted
 * client). JWT access tokens are verified without the database, so every instance keeps this
 * list in memory: the revoking instance adds to it at once, the others read new rows (by `seq`)
 * every `pollMs` — one indexed query, however busy the instance is.
 */
export class RevocationList {
  readonly #revoked = new Map<string, number>()
  #lastSeq = 0
  #timer: NodeJS.Timeout | undefined
  #polling: Promise<void> | undefined

  constructor(
    private readonly db: Db,
    private readonly options: RevocationListOptions,
  ) {}

  async start(): Promise<void> {
    await this.poll()
    this.#timer = setInterval(() => {
      this.poll().catch((error: unknown) => this.options.onError?.(error))
    }, this.options.pollMs)
    this.#timer.unref()
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer)
    await this.#polling?.catch(() => {})
  }

  isRevoked(subject: string): boolean {
    const until = this.#revoked.get(subject)
    return until !== undefined && until > Date.now()
  }

  /** Records a revocation until `expiresAt` (when every token it covers has expired anyway). */
  async revoke(subject: string, expiresAt: Date): Promise<void> {
    this.#revoked.set(subject, expiresAt.getTime())
    await this.db
      .insertInto('oauth_revocations')
      .values({ subject, expires_at: expiresAt.toISOString(), created_at: nowIso() })
      .onConflict((oc) => oc.column('subject').doUpdateSet({ expires_at: expiresAt.toISOString() }))
      .execute()
  }

  /** Reads revocations made since the last poll (by any instance); drops expired ones. */
  poll(): Promise<void> {
    this.#polling ??= this.#poll().finally(() => {
      this.#polling = undefined
    })
    return this.#polling
  }

  async #poll(): Promise<void> {
    const now = nowIso()
    const rows = await this.db
      .selectFrom('oauth_revocations')
      .select(['seq', 'subject', 'expires_at'])
      // A small overlap: on PostgreSQL a row can commit after one with a higher seq.
      .where('seq', '>', this.#lastSeq - 100)
      .where('expires_at', '>', now)
      .orderBy('seq')
      .execute()
    for (const row of rows) {
      this.#revoked.set(row.subject, Date.parse(row.expires_at))
      this.#lastSeq = Math.max(this.#lastSeq, Number(row.seq))
    }
    const at = Date.now()
    for (const [subject, until] of this.#revoked) if (until <= at) this.#revoked.delete(subject)
  }

  /** Removes rows whose tokens have all expired. */
  async purge(): Promise<void> {
    await this.db.deleteFrom('oauth_revocations').where('expires_at', '<=', nowIso()).execute()
  }
}
