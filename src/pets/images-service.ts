import { randomBytes } from 'node:crypto'
import { lockAccount } from '../accounts/accounts-service.ts'
import type { Db } from '../db/schema.ts'
import { ApiError } from '../errors/api-error.ts'
import { nowIso } from '../lib/time.ts'
import { LIMITS } from '../schemas/common.ts'
import { findImageInfo, imageBytesOfAccount, insertImage, readImageBytes } from './images-repository.ts'
import type { Pet } from './pet.ts'
import { imageTypeOf, imageUrl } from './pet-images.ts'
import { getPet, updatePet } from './pets-service.ts'

/**
 * The rules of uploaded pet images. An image lives in the database beside its pet (every
 * instance serves it), is written in the same transaction as the photo URL that names it (a
 * refused or failed upload leaves nothing), is deleted with that URL or its pet (see
 * pets-service.ts and the foreign key of migration 2026-11-23T03-images), and counts toward its
 * account's quota.
 */

/** Largest image accepted by uploadImage. */
export const IMAGE_LIMIT_BYTES = 10 * 1024 * 1024

function assertRoomForPhoto(pet: Pet): void {
  if (pet.photoUrls.length < LIMITS.photoUrls) return
  throw new ApiError('validation_failed', `A pet has at most ${LIMITS.photoUrls} photo URLs.`, {
    param: 'photoUrls',
    errors: [{ param: 'photoUrls', message: `\`photoUrls\` must have at most ${LIMITS.photoUrls} items` }],
  })
}

function quotaExceeded(quotaBytes: number, usedBytes: number, imageBytes: number | undefined): ApiError {
  const what = imageBytes === undefined ? 'Another image' : `This image (${imageBytes} bytes)`
  return new ApiError(
    'image_quota_exceeded',
    `${what} would exceed your account's image storage quota of ${quotaBytes} bytes: ${usedBytes} bytes are in use. Delete photos (drop their URLs from a pet's photoUrls, or delete the pet) to make room.`,
    { param: 'file', extensions: { quota_bytes: quotaBytes, used_bytes: usedBytes } },
  )
}

/**
 * The checks that can refuse an upload before its body is read: 404 for an unknown pet, 422 when
 * the pet has no room for another photo, 413 when the account's quota is already used up.
 */
export async function assertCanUpload(
  db: Db,
  accountId: string,
  petId: number,
  quotaBytes: number,
): Promise<void> {
  assertRoomForPhoto(await getPet(db, accountId, petId))
  const used = await imageBytesOfAccount(db, accountId)
  if (used >= quotaBytes) throw quotaExceeded(quotaBytes, used, undefined)
}

export interface NewPetImage {
  accountId: string
  petId: number
  data: Buffer
  /** As the client named the file, for messages only. */
  filename: string
  /** Base of the URL added to photoUrls. */
  publicUrl: string
  quotaBytes: number
}

/** In the caller's transaction: stores the image and adds its URL to the pet's photoUrls. */
export async function addPetImage(db: Db, image: NewPetImage): Promise<{ url: string; bytes: number }> {
  const { accountId, petId, data } = image
  const type = imageTypeOf(data)
  if (type === undefined) {
    throw new ApiError(
      'unsupported_file_type',
      `${JSON.stringify(image.filename)} is not a JPEG, PNG, GIF or WebP image.`,
      { param: 'file' },
    )
  }
  // The account's uploads take turns until the transaction ends, so two cannot each fit under
  // the quota on their own and exceed it together.
  await lockAccount(db, accountId)
  const pet = await getPet(db, accountId, petId)
  assertRoomForPhoto(pet)
  const used = await imageBytesOfAccount(db, accountId)
  if (used + data.length > image.quotaBytes) throw quotaExceeded(image.quotaBytes, used, data.length)

  const name = `${petId}-${randomBytes(12).toString('base64url')}.${type.ext}`
  await insertImage(db, { name, accountId, petId, contentType: type.mime, data, at: nowIso() })
  const url = imageUrl(image.publicUrl, name)
  // Appended to the photo URLs as they are when written, not as read above: a change committed
  // meanwhile (PostgreSQL reads committed rows) is kept, and the photo limit is checked again.
  await updatePet(db, accountId, petId, (current) => {
    assertRoomForPhoto(current)
    return { photoUrls: [...current.photoUrls, url] }
  })
  return { url, bytes: data.length }
}

/**
 * Bytes of an image read at a time when it is sent: what one client that reads slowly (or not
 * at all) keeps in memory, instead of the whole image.
 */
export const IMAGE_CHUNK_BYTES = 512 * 1024

export interface ImageToSend {
  contentType: string
  size: number
  /** Its bytes, one chunk per step, each read from the database when the caller asks for it. */
  chunks(): AsyncGenerator<Buffer>
}

/** An image by the name in its URL (public: names are unguessable); 404 once it is deleted. */
export async function findImageToSend(db: Db, name: string): Promise<ImageToSend> {
  const info = await findImageInfo(db, name)
  if (info === undefined) throw new ApiError('not_found', `No image ${name}.`)
  return {
    contentType: info.contentType,
    size: info.sizeBytes,
    chunks: () => imageChunks(db, name, info.sizeBytes),
  }
}

async function* imageChunks(db: Db, name: string, size: number): AsyncGenerator<Buffer> {
  for (let offset = 0; offset < size; ) {
    const chunk = await readImageBytes(db, name, offset, IMAGE_CHUNK_BYTES)
    // Deleted while being sent: the answer ends short of its Content-Length, which clients notice.
    if (chunk === undefined || chunk.length === 0)
      throw new Error(`image ${name} was deleted while being sent`)
    offset += chunk.length
    yield chunk
  }
}
