import { readdir, readFile, rm, rmdir } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import type { Kysely } from 'kysely'
import { sqlitePath } from '../config/config.ts'
import type { Database } from '../db/schema.ts'
import { nowIso } from '../lib/time.ts'
import { imageNamesIn, imageTypeOf, isImageName } from './pet-images.ts'

/** Where versions before 2026-11-23 wrote uploaded images: beside the SQLite file, or ./data/uploads. */
export function legacyUploadDir(databaseUrl: string): string {
  return databaseUrl.startsWith('sqlite:') && sqlitePath(databaseUrl) !== ':memory:'
    ? join(dirname(sqlitePath(databaseUrl)), 'uploads')
    : resolve('data', 'uploads')
}

export interface LegacyImport {
  /** Images a pet still listed, now in the database. */
  imported: number
  /** Files no pet listed (deleted pets, dropped URLs, refused uploads), removed. */
  discarded: number
}

/**
 * Moves the image files an earlier version left on this instance's disk into the database, once:
 * each file a pet still lists becomes a row of pet_images (served by every instance, deleted
 * with its pet), then the file is removed. Files no pet lists were what that version failed to
 * delete, and nothing serves them any more: they are removed too. Other files are left alone.
 */
export async function importLegacyImages(db: Kysely<Database>, dir: string): Promise<LegacyImport> {
  const result: LegacyImport = { imported: 0, discarded: 0 }
  let names: string[]
  try {
    names = await readdir(dir)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return result
    throw error
  }
  for (const name of names.filter(isImageName)) {
    const path = join(dir, name)
    const data = await readFile(path)
    const type = imageTypeOf(data)
    // Named by the pet's id of that time, from the one global sequence: today's `seq`.
    const seq = Number(name.slice(0, name.indexOf('-')))
    const kept = await db.transaction().execute(async (trx) => {
      const pet = await trx
        .selectFrom('pets')
        .select(['account_id', 'id', 'photo_urls'])
        .where('seq', '=', seq)
        .executeTakeFirst()
      if (pet === undefined || type === undefined) return false
      if (!imageNamesIn(JSON.parse(pet.photo_urls) as string[]).includes(name)) return false
      await trx
        .insertInto('pet_images')
        .values({
          name,
          account_id: pet.account_id,
          pet_id: pet.id,
          content_type: type.mime,
          size_bytes: data.length,
          data,
          created_at: nowIso(),
        })
        // Another instance sharing this folder may have imported it a moment ago.
        .onConflict((oc) => oc.column('name').doNothing())
        .execute()
      return true
    })
    await rm(path, { force: true })
    if (kept) result.imported++
    else result.discarded++
  }
  // Gone once nothing else is in it.
  await rmdir(dir).catch(() => {})
  return result
}
