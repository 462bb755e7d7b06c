import { sql } from 'kysely'
import { beforeAll, expect, it } from 'vitest'
import { updatePet } from '../../src/pets/pets-service.ts'
import { useTestApp } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'
import { multipart, PNG } from '../helpers/multipart.ts'
import { accessToken, bearer, newClient, type TestClient } from '../helpers/oauth.ts'
import { waitUntil } from '../helpers/poll.ts'

/** Polls `condition` every 10 ms for up to 10 s. */
async function until(condition: () => Promise<boolean>): Promise<void> {
  await waitUntil('the condition holds', condition, 10_000, 10)
}

describeDb('an image upload racing another change of the pet (PostgreSQL, READ COMMITTED)', () => {
  let client: TestClient
  let token: string

  const t = useTestApp()
  beforeAll(async () => {
    client = await newClient(t)
    token = await accessToken(t.app, client)
  })

  it('adds its photo URL to the photo URLs as they are when it writes, losing no other change', async () => {
    const pet = (
      await t.app.inject({
        method: 'POST',
        url: '/v2/pet',
        headers: bearer(token),
        payload: { name: 'Raced', photoUrls: ['https://example.com/a.jpg'] },
      })
    ).json()
    // Another writer changes the photo URLs and holds its transaction (and the row) open…
    let release!: () => void
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    let written!: () => void
    const changed = new Promise<void>((resolve) => {
      written = resolve
    })
    const other = t.database.db.transaction().execute(async (trx) => {
      await updatePet(trx, client.accountId, pet.id, {
        photoUrls: ['https://example.com/a.jpg', 'https://example.com/b.jpg'],
      })
      written()
      await held
    })
    await changed
    // …while the upload reads the pet and then waits for the row to write its URL.
    const upload = t.app.inject({
      method: 'POST',
      url: `/v2/pet/${pet.id}/uploadImage`,
      ...multipart([{ name: 'file', filename: 'p.png', type: 'image/png', data: PNG }]),
      headers: { ...bearer(token), ...multipart([]).headers },
    })
    await until(async () => {
      const { rows } = await sql<{ waiting: number }>`
        select count(*)::int as waiting from pg_stat_activity
        where wait_event_type = 'Lock' and query ilike '%update "pets"%' and datname = current_database()`.execute(
        t.database.db,
      )
      return rows[0]!.waiting > 0
    })
    release()
    await other
    const res = await upload
    expect(res.statusCode, res.body).toBe(200)
    const after = (
      await t.app.inject({ method: 'GET', url: `/v2/pet/${pet.id}`, headers: bearer(token) })
    ).json()
    expect(after.photoUrls.slice(0, 2)).toEqual(['https://example.com/a.jpg', 'https://example.com/b.jpg'])
    expect(after.photoUrls).toHaveLength(3)
  })
})
