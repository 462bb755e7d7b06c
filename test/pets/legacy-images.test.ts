import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { findOrCreateAccount } from '../../src/accounts/accounts-repository.ts'
import { importLegacyImages } from '../../src/pets/legacy-images-import.ts'
import { createPet } from '../../src/pets/pets-service.ts'
import { createTestApp, type TestApp } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'
import { PNG } from '../helpers/multipart.ts'

describeDb('images left on disk by versions before 2026-11-23', () => {
  let t: TestApp
  let dir: string
  beforeAll(async () => {
    t = await createTestApp()
    dir = mkdtempSync(join(tmpdir(), 'pet-service-legacy-'))
  })
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true })
    await t.close()
  })

  it('moves the files a pet still lists into the database, and removes them and the leftovers from disk', async () => {
    const { account } = await findOrCreateAccount(t.database.db, 'legacy@example.com')
    const listed = 'AAAAAAAAAAAAAAAA.png'
    const id = await t.database.ids.reserve(account.id, 'pet')
    const pet = await t.database.db
      .transaction()
      .execute((trx) => createPet(trx, account.id, { name: 'Old', photoUrls: [] }, id))
    // Files were named by the global id of their time, which the pet keeps as its `seq`.
    const { seq } = await t.database.db
      .selectFrom('pets')
      .select('seq')
      .where('account_id', '=', account.id)
      .where('id', '=', pet.id)
      .executeTakeFirstOrThrow()
    const listedName = `${seq}-${listed}`
    const orphanName = `${seq}-BBBBBBBBBBBBBBBB.png`
    await t.database.db
      .updateTable('pets')
      .set({ photo_urls: JSON.stringify([`http://old.example:8080/v2/images/${listedName}`]) })
      .where('account_id', '=', account.id)
      .where('id', '=', pet.id)
      .execute()
    const uploads = join(dir, 'uploads')
    mkdirSync(uploads)
    writeFileSync(join(uploads, listedName), PNG)
    writeFileSync(join(uploads, orphanName), PNG)
    writeFileSync(join(uploads, 'README.txt'), 'not ours')

    expect(await importLegacyImages(t.database.db, uploads)).toEqual({ imported: 1, discarded: 1 })
    expect(readdirSync(uploads)).toEqual(['README.txt'])

    const served = await t.app.inject({ method: 'GET', url: `/v2/images/${listedName}` })
    expect(served.statusCode).toBe(200)
    expect(served.headers['content-type']).toBe('image/png')
    expect(served.rawPayload.equals(PNG)).toBe(true)
    expect((await t.app.inject({ method: 'GET', url: `/v2/images/${orphanName}` })).statusCode).toBe(404)
    const row = await t.database.db
      .selectFrom('pet_images')
      .select(['account_id', 'pet_id', 'size_bytes'])
      .where('name', '=', listedName)
      .executeTakeFirstOrThrow()
    expect(row).toEqual({ account_id: account.id, pet_id: pet.id, size_bytes: PNG.length })

    // Nothing left to do the next time the service starts; an emptied folder is removed.
    rmSync(join(uploads, 'README.txt'))
    expect(await importLegacyImages(t.database.db, uploads)).toEqual({ imported: 0, discarded: 0 })
    expect(existsSync(uploads)).toBe(false)
    expect(await importLegacyImages(t.database.db, uploads)).toEqual({ imported: 0, discarded: 0 })
  })
})
