import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { ApiError } from '../errors/api-error.ts'
import { ERRORS, type ErrorCode } from '../errors/registry.ts'

/** Each problem `type` URI (`/problems/{code}`) resolves to a short description of the code. */
export async function problemPages(app: FastifyInstance): Promise<void> {
  app.get(
    '/problems/:code',
    {
      schema: {
        summary: 'Describe an error code',
        tags: ['service'],
        params: Type.Object({ code: Type.String({ maxLength: 64 }) }),
        response: {
          200: Type.Object({
            code: Type.String(),
            status: Type.Integer(),
            title: Type.String(),
            description: Type.String(),
          }),
        },
      },
    },
    async (request) => {
      const { code } = request.params as { code: string }
      if (!Object.hasOwn(ERRORS, code))
        throw new ApiError('not_found', `There is no error code ${JSON.stringify(code)}.`)
      const entry = ERRORS[code as ErrorCode]
      return { code, status: entry.status, title: entry.title, description: entry.description }
    },
  )
}
