import type { ListPromise } from '../pagination.ts'
import type { RequestOptions, WithResponse } from '../request-options.ts'
import type { DeletedOrder, Order, OrderCreateParams, OrderListParams, OrderUpdateParams } from '../types.ts'
import { idPath, Resource } from './resource.ts'

/** `client.orders`: store orders for the pets of your account (v1, API key). */
export class Orders extends Resource {
  /** `POST /v1/order`. Only `pet_id` (a pet of your account) is required. Safe to retry: it always carries an Idempotency-Key. */
  create(params: OrderCreateParams, options?: RequestOptions): Promise<WithResponse<Order>> {
    return this.call<Order>({ method: 'POST', path: '/v1/order', json: params, credential: 'key' }, options)
  }

  /** `GET /v1/order/{id}`. */
  get(id: number, options?: RequestOptions): Promise<WithResponse<Order>> {
    return this.call<Order>({ method: 'GET', path: idPath('/v1/order', id), credential: 'key' }, options)
  }

  /** `PATCH /v1/order/{id}`: only the fields given change (null clears `ship_date`). */
  update(id: number, fields: OrderUpdateParams, options?: RequestOptions): Promise<WithResponse<Order>> {
    return this.call<Order>(
      { method: 'PATCH', path: idPath('/v1/order', id), json: fields, credential: 'key' },
      options,
    )
  }

  /** `DELETE /v1/order/{id}`. */
  delete(id: number, options?: RequestOptions): Promise<WithResponse<DeletedOrder>> {
    return this.call<DeletedOrder>(
      { method: 'DELETE', path: idPath('/v1/order', id), credential: 'key' },
      options,
    )
  }

  /** `GET /v1/order`, newest first by creation: await for one page, `for await` for all. */
  list(params: OrderListParams = {}, options?: RequestOptions): ListPromise<Order, number> {
    return this.paginate<Order, number>('/v1/order', params, options)
  }
}
