import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { checkArchitecture, findViolations } from '../scripts/check-architecture.ts'

const fixtures: string[] = []
afterEach(() => {
  for (const dir of fixtures.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** Writes a throwaway `src/` tree: `{ 'pets/pet.ts': "import '../users/user.ts'" }`. */
function sourceTree(files: Record<string, string>): string {
  const root = mkdtempSync(path.join(tmpdir(), 'architecture-'))
  fixtures.push(root)
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true })
    writeFileSync(path.join(root, file), `${text}\n`)
  }
  return root
}

describe('the architecture check', () => {
  it('reports a folder-level import cycle and an import from a lower layer into a higher one', () => {
    const root = sourceTree({
      'pets/pets-service.ts': "import { countPets } from '../users/users-service.ts'",
      'users/users-service.ts': "export { listPets } from '../pets/pets-service.ts'",
      'lib/optimistic.ts': "import type { Reply } from '../routes/v1/pets.ts'",
      'routes/v1/pets.ts': "import { petsService } from '../../pets/pets-service.ts'",
    })
    expect(findViolations(root)).toEqual([
      'cycle: pets, users',
      'upward: src/lib/optimistic.ts -> src/routes/v1/pets.ts',
    ])
  })

  it('reports a long route file and a repository reached from another feature', () => {
    const root = sourceTree({
      'routes/v2/pets.ts': `${"import '../../pets/pets-repository.ts'\n".repeat(300)}export {}`,
      'pets/pets-repository.ts': 'export const table = 1',
      'pets/pets-service.ts': "import { table } from './pets-repository.ts'",
    })
    expect(findViolations(root)).toEqual([
      'repository: src/routes/v2/pets.ts -> src/pets/pets-repository.ts',
      'route-size: src/routes/v2/pets.ts (301 lines)',
    ])
  })

  it("reports a file that names another feature's table, in the query builder or in raw SQL", () => {
    const root = sourceTree({
      'pets/pets-repository.ts': [
        "import { sql } from 'kysely'",
        "export const a = (db) => db.selectFrom('pets').innerJoin('users as u', 'u.id', 'pets.owner_id')",
        "export const b = (db) => db.insertInto('events').values({})",
        'export const c = sql`(delete from pet_images where pet_id in (select id from updated_pet))`',
        `export const d = sql\`(insert into idempotency_keys (key) select \${'k'} from key_wait_bounded)\``,
        '// A comment may name webhook_deliveries: select 1 from webhook_attempts',
      ].join('\n'),
      'webhooks/webhooks-repository.ts':
        "export const e = (db) => db.selectFrom('webhook_endpoints').select('events.seq')",
      'db/migrations/2026-01-01-events.ts': "export const f = (db) => db.schema.createTable('events')",
    })
    expect(findViolations(root)).toEqual([
      'table: src/pets/pets-repository.ts names events (owned by src/events/)',
      'table: src/pets/pets-repository.ts names idempotency_keys (owned by src/idempotency/)',
      'table: src/pets/pets-repository.ts names users (owned by src/users/)',
      'table: src/webhooks/webhooks-repository.ts names events (owned by src/events/)',
    ])
  })

  it('reports a table of the schema that no feature owns', () => {
    const root = sourceTree({
      'db/schema.ts': 'export interface Database {\n  pets: PetsTable\n  pet_notes: PetNotesTable\n}',
    })
    expect(findViolations(root)).toEqual(['unowned: table pet_notes (add it to TABLE_OWNERS)'])
  })

  it('reports Fastify, or a request or reply, below the routes (domain and non-HTTP platform folders)', () => {
    const root = sourceTree({
      'idempotency/idempotent-create.ts':
        "import type { FastifyReply, FastifyRequest } from 'fastify'\nexport type R = FastifyReply",
      'webhooks/worker-start.ts': "import type { FastifyInstance } from 'fastify'",
      'access/scope-check.ts': "declare module 'fastify' { interface FastifyRequest { principal: null } }",
      'lib/form.ts': "import formbody from '@fastify/formbody'",
      'http/request-id.ts': "import type { FastifyInstance } from 'fastify'",
      'routes/idempotent-create.ts': "import type { FastifyReply } from 'fastify'",
      'pets/pets-service.ts': '// Not a FastifyRequest: the route hands the fields over.',
    })
    expect(findViolations(root)).toEqual([
      'http: src/access/scope-check.ts uses FastifyRequest',
      'http: src/idempotency/idempotent-create.ts uses FastifyReply',
      'http: src/idempotency/idempotent-create.ts uses FastifyRequest',
      'http: src/idempotency/idempotent-create.ts uses fastify',
      'http: src/lib/form.ts uses @fastify/formbody',
      'http: src/webhooks/worker-start.ts uses FastifyInstance',
      'http: src/webhooks/worker-start.ts uses fastify',
    ])
  })

  it('fails on a violation the known list does not name, and on a listed one that is gone', () => {
    const root = sourceTree({
      'http/etag.ts': "import '../lib/time.ts'",
      'lib/time.ts': "import '../http/etag.ts'",
    })
    const report = checkArchitecture(root, ['upward: src/lib/ids.ts -> src/http/etag.ts'])
    expect(report.unexpected).toEqual(['cycle: http, lib'])
    expect(report.stale).toEqual(['upward: src/lib/ids.ts -> src/http/etag.ts'])
  })

  it('passes on the real source tree with only the listed violations', () => {
    const report = checkArchitecture(path.join(import.meta.dirname, '../src'))
    expect({ unexpected: report.unexpected, stale: report.stale }).toEqual({ unexpected: [], stale: [] })
  })
})
