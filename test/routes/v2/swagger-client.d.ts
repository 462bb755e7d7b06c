// swagger-client ships no types; this is the part the tests use.
declare module 'swagger-client' {
  export interface SwaggerClientInstance {
    spec: { paths: Record<string, Record<string, { operationId?: string }>> }
    execute(request: Record<string, unknown>): Promise<unknown>
  }
  export default function SwaggerClient(options: {
    url?: string
    spec?: unknown
    authorizations?: Record<string, unknown>
    requestInterceptor?: (request: { headers: Record<string, string> }) => unknown
  }): Promise<SwaggerClientInstance>
}
