import type pg from 'pg'

/**
 * Every statement the pool's connections send from now on (its SQL text), in order. The
 * request's statements are the only ones while a test waits for it: the test app runs no
 * background work on its own between requests of a test.
 */
export function recordStatements(pool: pg.Pool): string[] {
  const statements: string[] = []
  const patched = new WeakSet<pg.PoolClient>()
  pool.on('acquire', (client) => {
    if (patched.has(client)) return
    patched.add(client)
    const query = client.query.bind(client) as (...args: unknown[]) => unknown
    ;(client as { query: unknown }).query = (...args: unknown[]) => {
      const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string }).text
      statements.push(String(text).replace(/\s+/g, ' ').trim())
      return query(...args)
    }
  })
  return statements
}
