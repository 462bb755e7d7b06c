// node --import tsx bench/sqlite-ceiling.ts DB_PATH EMAIL [SECONDS] [PER_COMMIT]
//
// What SQLite alone costs for the statements behind each case, in one process with no HTTP,
// no framework and no query builder: the service's statements and pragmas, prepared once, run
// in a loop. Writes are committed as the service commits them (src/db/sqlite-group-commit.ts):
// PER_COMMIT transactions share one commit, each in a savepoint of its own; PER_COMMIT is what
// the service's create case averaged (its sqlite_group_commit_transactions metric), 32 unless
// given. `create, one per commit` is the same create committed alone, for comparison. Prints CPU
// µs per operation as JSON. The service cannot beat these figures, so
// `bare CPU per request ÷ this` is the highest ratio a case could reach on this machine.
import BetterSqlite3 from 'better-sqlite3'

const [path, email, secondsArg, perCommitArg] = process.argv.slice(2)
if (path === undefined || email === undefined)
  throw new Error('usage: sqlite-ceiling.ts DB_PATH EMAIL [SECONDS] [PER_COMMIT]')
const seconds = Number(secondsArg ?? 1)
const perCommit = Math.max(1, Math.round(Number(perCommitArg ?? 32)))

const db = new BetterSqlite3(path)
// The writer's pragmas (src/db/database.ts).
db.pragma('journal_mode = WAL')
db.pragma('synchronous = NORMAL')
db.pragma('foreign_keys = ON')
db.pragma('temp_store = MEMORY')
const account = (db.prepare('select id from accounts where email = ?').get(email) as { id: string }).id
// Pet ids are per account; the service hands them out from memory (src/db/account-ids.ts).
const maxId = (db.prepare('select max(id) as n from pets where account_id = ?').get(account) as { n: number })
  .n
let nextId = maxId + 1
const randomId = () => 1 + Math.floor(Math.random() * maxId)
let n = 0

const begin = db.prepare('begin immediate')
const commit = db.prepare('commit')
const savepoint = db.prepare('savepoint kysely_member')
const release = db.prepare('release kysely_member')
// The statements the service sends (src/pets/pets-repository.ts, src/events/events-repository.ts).
const insertPet = db.prepare(`insert into pets (id, account_id, name, owner_id, species, breed, status,
  photo_urls, category, tags, status_omitted, version, created_at, updated_at)
  values (?, ?, ?, null, ?, ?, 'available', '[]', null, '[]', 0, 1, ?, ?) on conflict (account_id, id) do nothing`)
const insertEvent =
  db.prepare(`insert into events (id, account_id, type, object_id, data, previous_attributes,
  created_at) values (?, ?, ?, ?, ?, ?, ?)`)
const findPet = db.prepare('select * from pets where id = ? and account_id = ?')
const updatePet = db.prepare(
  'update pets set name = ?, version = ?, updated_at = ? where id = ? and account_id = ? and version = ?',
)
const listPage = db.prepare('select * from pets where account_id = ? and seq < ? order by seq desc limit ?')
// Time-ordered, as the service's (src/lib/ids.ts): the id index is appended to, not written at random.
const eventId = () => `evt_${Date.now().toString(36).padStart(9, '0')}${process.pid}_${++n}`

/** The service's transaction: its own savepoint inside the shared one. */
function member(work: () => void): void {
  savepoint.run()
  work()
  release.run()
}

const createOne = () => {
  const at = new Date().toISOString()
  const id = nextId++
  insertPet.run(id, account, 'Rex', 'dog', 'Beagle', at, at)
  const pet = { id, object: 'pet', name: 'Rex', owner_id: null, species: 'dog', breed: 'Beagle' }
  insertEvent.run(eventId(), account, 'pet.created', String(id), JSON.stringify(pet), null, at)
}

const updateOne = () => {
  const at = new Date().toISOString()
  const pet = findPet.get(randomId(), account) as { id: number; version: number } | undefined
  if (pet === undefined) return
  if (updatePet.run(`Rex ${n}`, pet.version + 1, at, pet.id, account, pet.version).changes === 1) {
    const changed = JSON.stringify({ id: pet.id, name: `Rex ${n}`, version: pet.version + 1 })
    insertEvent.run(eventId(), account, 'pet.updated', String(pet.id), changed, '{}', at)
  }
}

/** `work` for each of a shared commit's members. */
const shared = (work: () => void) => () => {
  begin.run()
  for (let i = 0; i < perCommit; i++) member(work)
  commit.run()
}

/** Each operation and how many it performs per call. */
const operations: Record<string, [() => void, number]> = {
  create: [shared(createOne), perCommit],
  'create, one per commit': [
    () => {
      begin.run()
      member(createOne)
      commit.run()
    },
    1,
  ],
  read: [() => findPet.get(randomId(), account), 1],
  update: [shared(updateOne), perCommit],
  list: [
    () => {
      const low = Math.floor(maxId * 0.1)
      listPage.all(account, low + Math.floor(Math.random() * (maxId * 0.4)), 11)
    },
    1,
  ],
}

const result: Record<string, number> = { perCommit }
for (const [name, [operation, per]] of Object.entries(operations)) {
  for (let i = 0; i < Math.ceil(200 / per); i++) operation()
  let count = 0
  // CPU time, not wall time: comparable with the servers' CPU µs per request, and steadier
  // on a shared machine.
  const cpu = process.cpuUsage()
  const until = performance.now() + seconds * 1000
  while (performance.now() < until) {
    for (let i = 0; i < Math.ceil(50 / per); i++) operation()
    count += Math.ceil(50 / per) * per
  }
  const used = process.cpuUsage(cpu)
  result[name] = (used.user + used.system) / count
}
db.close()
process.stdout.write(`${JSON.stringify(result)}\n`)
