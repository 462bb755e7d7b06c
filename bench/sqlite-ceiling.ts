// node --import tsx bench/sqlite-ceiling.ts DB_PATH EMAIL SECONDS
//
// What SQLite alone costs for the statements behind each case, in one process with no HTTP,
// no framework and no query builder: prepared once, run in a loop, with the service's
// pragmas. Prints CPU µs per operation as JSON. The service cannot beat these figures, so
// `bare CPU per request ÷ this` is the highest ratio a case could reach on this machine.
import BetterSqlite3 from 'better-sqlite3'

const [path, email, secondsArg] = process.argv.slice(2)
if (path === undefined || email === undefined)
  throw new Error('usage: sqlite-ceiling.ts DB_PATH EMAIL [SECONDS]')
const seconds = Number(secondsArg ?? 1)

const db = new BetterSqlite3(path)
db.pragma('journal_mode = WAL')
db.pragma('synchronous = NORMAL')
db.pragma('foreign_keys = ON')
const account = (db.prepare('select id from accounts where email = ?').get(email) as { id: string }).id
// Pet ids are per account; the service hands them out from memory (src/db/account-ids.ts).
const maxId = (db.prepare('select max(id) as n from pets where account_id = ?').get(account) as { n: number })
  .n
let nextId = maxId + 1
const randomId = () => 1 + Math.floor(Math.random() * maxId)
let n = 0

const begin = db.prepare('begin')
const commit = db.prepare('commit')
const insertPet =
  db.prepare(`insert into pets (id, account_id, name, owner_id, species, breed, status, photo_urls,
  category, tags, version, created_at, updated_at) values (?, ?, ?, null, ?, ?, 'available', '[]', null, null, 1, ?, ?)
  on conflict (account_id, id) do nothing returning *`)
const insertEvent =
  db.prepare(`insert into events (id, account_id, type, object_id, data, previous_attributes,
  created_at) values (?, ?, ?, ?, ?, ?, ?)`)
const findPet = db.prepare('select * from pets where id = ? and account_id = ?')
const updatePet = db.prepare(
  'update pets set name = ?, version = ?, updated_at = ? where id = ? and account_id = ? and version = ? returning *',
)
const listPage = db.prepare('select * from pets where account_id = ? and seq < ? order by seq desc limit ?')
const eventId = () => `evt_ceiling${process.pid}_${++n}`

const operations: Record<string, () => void> = {
  create: () => {
    const at = new Date().toISOString()
    begin.run()
    const pet = insertPet.all(nextId++, account, 'Rex', 'dog', 'Beagle', at, at)[0] as { id: number }
    insertEvent.run(eventId(), account, 'pet.created', String(pet.id), JSON.stringify(pet), null, at)
    commit.run()
  },
  read: () => {
    findPet.get(randomId(), account)
  },
  update: () => {
    const at = new Date().toISOString()
    begin.run()
    const pet = findPet.get(randomId(), account) as { id: number; version: number } | undefined
    if (pet !== undefined) {
      const updated = updatePet.all(`Rex ${n}`, pet.version + 1, at, pet.id, account, pet.version)[0]
      insertEvent.run(eventId(), account, 'pet.updated', String(pet.id), JSON.stringify(updated), '{}', at)
    }
    commit.run()
  },
  list: () => {
    const low = Math.floor(maxId * 0.1)
    listPage.all(account, low + Math.floor(Math.random() * (maxId * 0.4)), 11)
  },
}

const result: Record<string, number> = {}
for (const [name, operation] of Object.entries(operations)) {
  for (let i = 0; i < 200; i++) operation()
  let count = 0
  // CPU time, not wall time: comparable with the servers' CPU µs per request, and steadier
  // on a shared machine.
  const cpu = process.cpuUsage()
  const until = performance.now() + seconds * 1000
  while (performance.now() < until) {
    for (let i = 0; i < 50; i++) operation()
    count += 50
  }
  const used = process.cpuUsage(cpu)
  result[name] = (used.user + used.system) / count
}
db.close()
process.stdout.write(`${JSON.stringify(result)}\n`)
