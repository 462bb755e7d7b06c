import type { ListPromise } from '../pagination.ts'
import type { RequestOptions, WithResponse } from '../request-options.ts'
import type { DeletedUser, User, UserCreateParams, UserListParams, UserUpdateParams } from '../types.ts'
import { idPath, Resource } from './resource.ts'

/** `client.users`: the pet owners of your account (v1, API key). */
export class Users extends Resource {
  /** `POST /v1/user`. Safe to retry: it always carries an Idempotency-Key. A username taken in the account is a ConflictError. */
  create(params: UserCreateParams, options?: RequestOptions): Promise<WithResponse<User>> {
    return this.call<User>({ method: 'POST', path: '/v1/user', json: params, credential: 'key' }, options)
  }

  /** `GET /v1/user/{id}`. */
  get(id: string, options?: RequestOptions): Promise<WithResponse<User>> {
    return this.call<User>({ method: 'GET', path: idPath('/v1/user', id), credential: 'key' }, options)
  }

  /** `PATCH /v1/user/{id}`: only the fields given change (null clears username, email or phone). */
  update(id: string, fields: UserUpdateParams, options?: RequestOptions): Promise<WithResponse<User>> {
    return this.call<User>(
      { method: 'PATCH', path: idPath('/v1/user', id), json: fields, credential: 'key' },
      options,
    )
  }

  /** `DELETE /v1/user/{id}`; refused (ConflictError) while pets still name the user as owner. */
  delete(id: string, options?: RequestOptions): Promise<WithResponse<DeletedUser>> {
    return this.call<DeletedUser>(
      { method: 'DELETE', path: idPath('/v1/user', id), credential: 'key' },
      options,
    )
  }

  /** `GET /v1/user`, newest first: await for one page, `for await` for all. */
  list(params: UserListParams = {}, options?: RequestOptions): ListPromise<User, string> {
    return this.paginate<User, string>('/v1/user', params, options)
  }
}
