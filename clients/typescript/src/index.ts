export { DEFAULT_BASE_URL, PetService, PetService as default, type PetServiceOptions } from './client.ts'
export {
  AuthenticationError,
  ConflictError,
  ConnectionError,
  type FieldError,
  InvalidRequestError,
  NotFoundError,
  PermissionError,
  PetServiceError,
  RateLimitError,
  ServerError,
  TimeoutError,
} from './errors.ts'
export {
  EventStream,
  type EventStreamMessage,
  type EventStreamOptions,
  type ReconnectInfo,
} from './event-stream.ts'
export type * from './event-types.ts'
export { EVENT_TYPES } from './event-types.ts'
export type { TokenResponse } from './oauth.ts'
export { ListPromise, type Page } from './pagination.ts'
export type { RequestOptions, ResponseInfo, WithResponse } from './request-options.ts'
export type * from './types.ts'
export {
  type SignOptions,
  type VerifyOptions,
  type WebhookHeaders,
  type WebhookPayload,
  type WebhookSignatureHeaders,
  WebhookVerificationError,
  type WebhookVerificationReason,
  webhooks,
} from './webhooks.ts'
