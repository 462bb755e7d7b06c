import type {
  DeletedWebhookEndpoint,
  QueuedWebhookDelivery,
  RotateSecretParams,
  WebhookDelivery,
  WebhookDeliveryListParams,
  WebhookEndpoint,
  WebhookEndpointCreateParams,
  WebhookEndpointListParams,
  WebhookEndpointUpdateParams,
  WebhookEndpointWithSecret,
} from '../event-types.ts'
import type { ListPromise } from '../pagination.ts'
import type { RequestOptions, WithResponse } from '../request-options.ts'
import { idPath, Resource } from './resource.ts'

const PATH = '/v1/webhook_endpoint'

/**
 * `client.webhookEndpoints`: where the service POSTs your account's events, signed (verify them
 * with `webhooks.verify`). Reads need `read:webhooks`, changes `write:webhooks`.
 */
export class WebhookEndpoints extends Resource {
  /**
   * `POST /v1/webhook_endpoint`. The answer holds the signing `secret` (`whsec_…`): store it
   * now, it is never shown again (rotateSecret makes a new one).
   */
  create(
    params: WebhookEndpointCreateParams,
    options?: RequestOptions,
  ): Promise<WithResponse<WebhookEndpointWithSecret>> {
    return this.call<WebhookEndpointWithSecret>(
      { method: 'POST', path: PATH, json: params, credential: 'key' },
      options,
    )
  }

  /** `GET /v1/webhook_endpoint/{id}`. */
  get(id: string, options?: RequestOptions): Promise<WithResponse<WebhookEndpoint>> {
    return this.call<WebhookEndpoint>({ method: 'GET', path: idPath(PATH, id), credential: 'key' }, options)
  }

  /** `PATCH /v1/webhook_endpoint/{id}`: only the fields given change (`status: 'disabled'` pauses it). */
  update(
    id: string,
    fields: WebhookEndpointUpdateParams,
    options?: RequestOptions,
  ): Promise<WithResponse<WebhookEndpoint>> {
    return this.call<WebhookEndpoint>(
      { method: 'PATCH', path: idPath(PATH, id), json: fields, credential: 'key' },
      options,
    )
  }

  /** `DELETE /v1/webhook_endpoint/{id}`: no more deliveries to it. */
  delete(id: string, options?: RequestOptions): Promise<WithResponse<DeletedWebhookEndpoint>> {
    return this.call<DeletedWebhookEndpoint>(
      { method: 'DELETE', path: idPath(PATH, id), credential: 'key' },
      options,
    )
  }

  /** `GET /v1/webhook_endpoint`, newest first: await for one page, `for await` for all. */
  list(
    params: WebhookEndpointListParams = {},
    options?: RequestOptions,
  ): ListPromise<WebhookEndpoint, string> {
    return this.paginate<WebhookEndpoint, string>(PATH, params, options)
  }

  /**
   * `POST /v1/webhook_endpoint/{id}/rotate_secret`: a new secret (in the answer, shown once);
   * the current one keeps signing alongside it for `expire_current_in_hours` (default 24, 0 = stop now).
   */
  rotateSecret(
    id: string,
    params: RotateSecretParams = {},
    options?: RequestOptions,
  ): Promise<WithResponse<WebhookEndpointWithSecret>> {
    return this.call<WebhookEndpointWithSecret>(
      { method: 'POST', path: `${idPath(PATH, id)}/rotate_secret`, json: params, credential: 'key' },
      options,
    )
  }

  /** `GET /v1/webhook_endpoint/{id}/delivery`: the delivery log, newest attempt first. */
  listDeliveries(
    id: string,
    params: WebhookDeliveryListParams = {},
    options?: RequestOptions,
  ): ListPromise<WebhookDelivery, string> {
    return this.paginate<WebhookDelivery, string>(`${idPath(PATH, id)}/delivery`, params, options)
  }

  /** `POST /v1/webhook_endpoint/{id}/resend`: deliver one event to this endpoint again (202). */
  resend(
    id: string,
    params: { event_id: string },
    options?: RequestOptions,
  ): Promise<WithResponse<QueuedWebhookDelivery>> {
    return this.call<QueuedWebhookDelivery>(
      { method: 'POST', path: `${idPath(PATH, id)}/resend`, json: params, credential: 'key' },
      options,
    )
  }

  /** `POST /v1/webhook_endpoint/{id}/test`: a `webhook.test` event to this endpoint only (202). */
  sendTest(id: string, options?: RequestOptions): Promise<WithResponse<QueuedWebhookDelivery>> {
    return this.call<QueuedWebhookDelivery>(
      { method: 'POST', path: `${idPath(PATH, id)}/test`, credential: 'key' },
      options,
    )
  }
}
