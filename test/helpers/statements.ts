import type pg from 'pg'

/**
 * Every statement the pool's connections send from now on (its SQL text), in order, except the
 * request log's inserts: those are written after the answer, in batches off the request path
 * (src/request-logs/request-log-writer.ts), and may land while a later request runs. The
 * request's statements are then the only ones while a test waits for it: the test app runs no
 * other background work on its own between requests of a test.
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
      const statement = String(text).replace(/\s+/g, ' ').trim()
      if (!statement.startsWith('insert into "request_log"')) statements.push(statement)
      return query(...args)
    }
  })
  return statements
}
