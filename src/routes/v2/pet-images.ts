import type { MultipartFile } from '@fastify/multipart'
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { ApiError } from '../../errors/api-error.ts'
import { holdForAnswer } from '../../http/answer-budget.ts'
import { pulledStream } from '../../lib/pulled-stream.ts'
import {
  addPetImage,
  assertCanUpload,
  findImageToSend,
  IMAGE_CHUNK_BYTES,
  IMAGE_LIMIT_BYTES,
} from '../../pets/images-service.ts'
import { IMAGE_NAME_PATTERN } from '../../pets/pet-images.ts'
import { oauthScope } from './authentication.ts'
import { PetIdV2Params, UploadImageBody } from './pet-schemas.ts'
import type { ApiResponse } from './pet-views.ts'
import { checkPetIdParam } from './pets.ts'
import { v2Problems } from './problems.ts'

const tags = ['pet']

/** A file name as sent, without any folder a client put before it (either kind of slash). */
function baseName(filename: string): string {
  return filename.slice(Math.max(filename.lastIndexOf('/'), filename.lastIndexOf('\\')) + 1)
}

/** Largest image accepted by uploadImage (the multipart limit of index.ts). */
export const UPLOAD_LIMIT_BYTES = IMAGE_LIMIT_BYTES

export interface V2PetImageRoutesOptions {
  /** Public base URL of the service, for the image URLs added to photoUrls. */
  publicUrl: string
}

/** uploadImage and the images it stores: the rules (type, photo count, quota) are the images service's. */
export async function v2PetImageRoutes(
  fastify: FastifyInstance,
  options: V2PetImageRoutesOptions,
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const { db, config } = app.deps

  app.post(
    '/pet/:petId/uploadImage',
    {
      attachValidation: true,
      config: { scope: 'write:pets' },
      preValidation: checkPetIdParam,
      schema: {
        operationId: 'uploadFile',
        summary: 'uploads an image',
        description: `Multipart field \`file\`: a JPEG, PNG, GIF or WebP image of at most ${UPLOAD_LIMIT_BYTES / 1024 / 1024} MiB. It is stored and its URL added to the pet's photoUrls.`,
        tags,
        security: [oauthScope('write:pets')],
        consumes: ['multipart/form-data'],
        params: PetIdV2Params,
        body: UploadImageBody,
        response: { 200: Type.Ref('ApiResponse'), ...v2Problems(404, 413, 415, 422) },
      },
    },
    async (request): Promise<ApiResponse> => {
      const { petId } = request.params
      const accountId = request.principal!.accountId
      if (!request.isMultipart()) {
        throw new ApiError(
          'unsupported_media_type',
          'Send the image as multipart/form-data in the field `file`.',
        )
      }
      // 404, 422 (no room for another photo) or 413 (quota used up) before reading a large body.
      await assertCanUpload(db, accountId, petId, config.imageQuotaBytes)
      let file: { data: Buffer; filename: string } | undefined
      let metadata: string | undefined
      for await (const part of request.parts()) {
        if (part.type === 'file') {
          if (part.fieldname !== 'file' || file !== undefined) {
            part.file.resume()
            continue
          }
          file = { data: await (part as MultipartFile).toBuffer(), filename: part.filename }
        } else if (part.fieldname === 'additionalMetadata') metadata = String(part.value)
      }
      if (file === undefined) {
        throw new ApiError('parameter_missing', 'Missing required multipart field `file`.', { param: 'file' })
      }
      const image = { accountId, petId, ...file, publicUrl: options.publicUrl }
      const { url, bytes } = await db
        .transaction()
        .execute((trx) => addPetImage(trx, { ...image, quotaBytes: config.imageQuotaBytes }))
      return {
        code: 200,
        type: 'unknown',
        // The Petstore's words (the file's name as sent, else as stored), then where it is served.
        message: `additionalMetadata: ${metadata ?? ''}\nFile uploaded to ./${baseName(file.filename) || baseName(url)}, ${bytes} bytes\nServed at ${url}`,
      }
    },
  )

  app.get(
    '/images/:name',
    {
      config: { public: true },
      schema: {
        operationId: 'getPetImage',
        summary: 'An uploaded pet image',
        description:
          'Public: image names are unguessable, like the photo URLs that carry them. 404 once the image is deleted (its URL dropped from the pet, or the pet deleted).',
        tags,
        security: [],
        params: Type.Object({
          name: Type.String({ pattern: IMAGE_NAME_PATTERN }),
        }),
        response: { 200: { type: 'string', format: 'binary' }, ...v2Problems(404) },
      },
    },
    async (request, reply) => {
      const image = await findImageToSend(db, request.params.name)
      // HEAD sends no body: nothing to hold, nothing to read.
      const head = request.method === 'HEAD'
      if (!head) holdForAnswer(request, reply, Math.min(image.size, IMAGE_CHUNK_BYTES))
      reply
        .type(image.contentType)
        .header('content-length', String(image.size))
        .header('cache-control', 'public, max-age=31536000, immutable')
        .header('x-content-type-options', 'nosniff')
      // A chunk is read once the client has taken the one before: a client that stops reading
      // holds one chunk, not the image. HEAD: an empty stream keeps Content-Length as set.
      return reply.send(pulledStream(head ? emptyChunks() : image.chunks()))
    },
  )
}

async function* emptyChunks(): AsyncGenerator<Buffer> {}
