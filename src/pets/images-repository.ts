import type { Db } from '../db/schema.ts'

export interface NewImage {
  name: string
  accountId: string
  petId: number
  contentType: string
  data: Buffer
  at: string
}

export interface ImageInfo {
  contentType: string
  sizeBytes: number
}

export async function insertImage(db: Db, image: NewImage): Promise<void> {
  await db
    .insertInto('pet_images')
    .values({
      name: image.name,
      account_id: image.accountId,
      pet_id: image.petId,
      content_type: image.contentType,
      size_bytes: image.data.length,
      data: image.data,
      created_at: image.at,
    })
    .execute()
}

/** The image's type and size (its bytes are not read). */
export async function findImageInfo(db: Db, name: string): Promise<ImageInfo | undefined> {
  const row = await db
    .selectFrom('pet_images')
    .select(['content_type', 'size_bytes'])
    .where('name', '=', name)
    .executeTakeFirst()
  return row === undefined ? undefined : { contentType: row.content_type, sizeBytes: Number(row.size_bytes) }
}

/**
 * `length` bytes of the image from `offset` (fewer at its end); undefined once it is deleted.
 * `substr` takes bytes of a BLOB (SQLite) and of a bytea (PostgreSQL), counting from 1.
 */
export async function readImageBytes(
  db: Db,
  name: string,
  offset: number,
  length: number,
): Promise<Buffer | undefined> {
  const row = await db
    .selectFrom('pet_images')
    .select((eb) => eb.fn<Buffer>('substr', ['data', eb.val(offset + 1), eb.val(length)]).as('bytes'))
    .where('name', '=', name)
    .executeTakeFirst()
  return row?.bytes
}

/** Bytes of images the account keeps (from the index; the images themselves are not read). */
export async function imageBytesOfAccount(db: Db, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('pet_images')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('size_bytes'), eb.lit(0)).as('used'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow()
  return Number(row.used)
}

/** Deletes the pet's images whose names are not in `keep`; answers how many went. */
export async function deleteImagesOfPetExcept(
  db: Db,
  accountId: string,
  petId: number,
  keep: readonly string[],
): Promise<number> {
  let query = db.deleteFrom('pet_images').where('account_id', '=', accountId).where('pet_id', '=', petId)
  if (keep.length > 0) query = query.where('name', 'not in', keep)
  const result = await query.executeTakeFirst()
  return Number(result.numDeletedRows)
}
