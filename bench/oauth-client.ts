// Stand-in for `pet-service clients create --account EMAIL --scope "read:pets write:pets" --json`
// while the admin CLI has no such command: makes the same client through the same service
// function, on DATABASE_URL, and prints the same JSON.
import { findOrCreateAccount } from '../src/accounts/accounts-repository.ts'
import { loadConfig } from '../src/config/config.ts'
import { openDatabase } from '../src/db/database.ts'
import { migrateToLatest } from '../src/db/migrate.ts'
import { createClient } from '../src/oauth/clients-service.ts'

const email = process.argv[2] ?? 'bench@example.com'
const database = openDatabase(loadConfig().databaseUrl)
try {
  await migrateToLatest(database.db)
  const { account } = await findOrCreateAccount(database.db, email)
  const { clientSecret, info } = await createClient(database.db, {
    accountId: account.id,
    name: 'bench',
    scopes: ['read:pets', 'write:pets'],
  })
  process.stdout.write(`${JSON.stringify({ client_id: info.client_id, client_secret: clientSecret })}\n`)
} finally {
  await database.close()
}
