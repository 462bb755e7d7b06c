import type { ListPromise } from '../pagination.ts'
import type { RequestOptions, WithResponse } from '../request-options.ts'
import type {
  DeletedPet,
  Pet,
  PetCreateParams,
  PetListParams,
  PetstorePet,
  PetstorePetUpdate,
  PetUpdateParams,
} from '../types.ts'
import { idPath, Resource } from './resource.ts'

/** `client.pets`: the v1 pet operations (API key), and the v2 Petstore replace (OAuth). */
export class Pets extends Resource {
  /** `POST /v1/pet`. Only `name` is required. Safe to retry: it always carries an Idempotency-Key. */
  create(params: PetCreateParams, options?: RequestOptions): Promise<WithResponse<Pet>> {
    return this.call<Pet>({ method: 'POST', path: '/v1/pet', json: params, credential: 'key' }, options)
  }

  /** `GET /v1/pet/{id}`. */
  get(id: number, options?: RequestOptions): Promise<WithResponse<Pet>> {
    return this.call<Pet>({ method: 'GET', path: idPath('/v1/pet', id), credential: 'key' }, options)
  }

  /** `PATCH /v1/pet/{id}`: only the fields given change (null clears one). */
  update(id: number, fields: PetUpdateParams, options?: RequestOptions): Promise<WithResponse<Pet>>
  /**
   * @deprecated Use `replace(pet)`: the Petstore's full replace has a method of its own. This
   * call shape keeps working, with a warning, until 0.3.0 (docs/VERSIONING.md, "Deprecation").
   */
  update(pet: PetstorePetUpdate, options?: RequestOptions): Promise<WithResponse<PetstorePet>>
  update(
    target: number | PetstorePetUpdate,
    fieldsOrOptions?: PetUpdateParams | RequestOptions,
    options?: RequestOptions,
  ): Promise<WithResponse<Pet>> | Promise<WithResponse<PetstorePet>> {
    if (typeof target === 'object' && target !== null) {
      this.warnOnce('pets.update(pet)', 'pets.replace(pet)')
      return this.replace(target, fieldsOrOptions as RequestOptions | undefined)
    }
    return this.call<Pet>(
      { method: 'PATCH', path: idPath('/v1/pet', target), json: fieldsOrOptions ?? {}, credential: 'key' },
      options,
    )
  }

  /**
   * `PUT /v2/pet`: the Petstore's full replace of the pet `pet.id` names, with an OAuth token
   * (`accessToken`, or `clientId` + `clientSecret`).
   */
  replace(pet: PetstorePetUpdate, options?: RequestOptions): Promise<WithResponse<PetstorePet>> {
    return this.call<PetstorePet>({ method: 'PUT', path: '/v2/pet', json: pet, credential: 'token' }, options)
  }

  /** `DELETE /v1/pet/{id}`. */
  delete(id: number, options?: RequestOptions): Promise<WithResponse<DeletedPet>> {
    return this.call<DeletedPet>(
      { method: 'DELETE', path: idPath('/v1/pet', id), credential: 'key' },
      options,
    )
  }

  /**
   * `GET /v1/pet`, newest first. `await` it for one page; `for await (const pet of …)` for
   * every pet of every page.
   */
  list(params: PetListParams = {}, options?: RequestOptions): ListPromise<Pet, number> {
    return this.paginate<Pet, number>('/v1/pet', params, options)
  }
}
