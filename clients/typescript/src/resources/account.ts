import type { RequestOptions, WithResponse } from '../request-options.ts'
import type { Account } from '../types.ts'
import { Resource } from './resource.ts'

/** `client.account`: the account the API key belongs to. */
export class AccountResource extends Resource {
  /**
   * `GET /v1/account`: the key's account, with `mode` (`live`, or `sandbox` for a
   * `pet_sk_test_` key) and, for a sandbox, the live account it belongs to.
   */
  retrieve(options?: RequestOptions): Promise<WithResponse<Account>> {
    return this.call<Account>({ method: 'GET', path: '/v1/account', credential: 'key' }, options)
  }
}
