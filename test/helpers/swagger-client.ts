import type { SwaggerClientInstance } from 'swagger-client'

/** An answer as swagger-client gives it. */
export interface SwaggerAnswer {
  status: number
  body: unknown
  text?: string
  headers: Record<string, string>
}

/** Runs one operation (`{ operationId, parameters, requestBody }`) and answers its response. */
export type Execute = (request: Record<string, unknown>) => Promise<SwaggerAnswer>

/**
 * swagger-client's `execute`, answering error statuses too: swagger-client throws on a 4xx or
 * 5xx with the response attached, and the tests check those answers like any other.
 */
export function answersOf(swagger: SwaggerClientInstance): Execute {
  return async (request) => {
    try {
      return (await swagger.execute(request)) as SwaggerAnswer
    } catch (error) {
      const response = (error as { response?: SwaggerAnswer }).response
      if (response === undefined) throw error
      return response
    }
  }
}
