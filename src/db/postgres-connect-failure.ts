/**
 * Why a PostgreSQL connection could not be had, in words an operator can act on: `serve` and
 * `migrate` print it when they cannot start, and it is the detail logged with a 503. Never
 * shows the password.
 */
export function connectFailure(error: unknown, databaseUrl: string): string {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown }
  const said = typeof message === 'string' ? message : String(error)
  // 3D000, invalid_catalog_name: the server answers, the database is not there.
  if (code === '3D000') {
    return `could not get a PostgreSQL connection: ${said}: create it with \`${createdb(databaseUrl)}\` (then \`pet-service migrate\`, or start the service, makes its tables).`
  }
  // PgBouncer refuses a startup parameter it cannot keep track of (08P01).
  const refused = /unsupported startup parameter: (\w+)/.exec(said)?.[1]
  if (refused !== undefined) {
    return `could not get a PostgreSQL connection: ${said}. A connection pooler such as PgBouncer stands in front of PostgreSQL and refuses the startup parameter ${refused}: set DB_POOLER to its pool mode (session or transaction), and the service sets its timeouts another way.`
  }
  return `could not get a PostgreSQL connection: ${said}`
}

/** The `createdb` command for the database the URL names, with its host, port and user. */
function createdb(databaseUrl: string): string {
  const url = URL.canParse(databaseUrl) ? new URL(databaseUrl) : undefined
  if (url === undefined) return 'createdb NAME'
  const words = ['createdb']
  if (url.hostname !== '') words.push('-h', url.hostname)
  if (url.port !== '') words.push('-p', url.port)
  if (url.username !== '') words.push('-U', shellWord(decodeURIComponent(url.username)))
  words.push(shellWord(decodeURIComponent(url.pathname.slice(1)) || 'NAME'))
  return words.join(' ')
}

function shellWord(word: string): string {
  return /^[\w.@%+=:,/-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`
}
