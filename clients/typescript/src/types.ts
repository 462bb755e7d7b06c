/**
 * The API's shapes, named. Everything here derives from ./generated/openapi.ts, which
 * `npm run generate` writes from the service's OpenAPI document, so the client's types follow
 * the service's schemas (a test fails when the generated file is stale).
 */
import type { operations } from './generated/openapi.ts'

type Json<T> = T extends { content: { 'application/json': infer Body } } ? Body : never
type Query<Op> = Op extends { parameters: { query?: infer Q } } ? Partial<NonNullable<Q>> : never

/** A pet (v1 representation, snake_case). */
export type Pet = Json<operations['getPet']['responses'][200]>
export type PetStatus = Pet['status']
export type PetCreateParams = Json<operations['createPet']['requestBody']>
export type PetUpdateParams = Json<operations['updatePetV1']['requestBody']>
export type PetListParams = Query<operations['listPets']>
export type DeletedPet = Json<operations['deletePetV1']['responses'][200]>

/** A user of your account: a pet owner. */
export type User = Json<operations['getUser']['responses'][200]>
export type UserCreateParams = Json<operations['createUser']['requestBody']>
export type UserUpdateParams = Json<operations['updateUser']['requestBody']>
export type UserListParams = Query<operations['listUsers']>
export type DeletedUser = Json<operations['deleteUser']['responses'][200]>

/** A store order for a pet of your account (v1 representation, snake_case). */
export type Order = Json<operations['getOrder']['responses'][200]>
export type OrderStatus = Order['status']
export type OrderCreateParams = Json<operations['createOrder']['requestBody']>
export type OrderUpdateParams = Json<operations['updateOrder']['requestBody']>
export type OrderListParams = Query<operations['listOrders']>
export type DeletedOrder = Json<operations['deleteOrderV1']['responses'][200]>

/** One API request of your account and its answer (`client.requestLogs`). */
export type RequestLog = Json<operations['getRequestLog']['responses'][200]>
export type RequestLogListParams = Query<operations['listRequestLogs']>
/** The account an API key belongs to: live, or a sandbox (`pet_sk_test_` keys). */
export type Account = Json<operations['getAccount']['responses'][200]>
export type AccountMode = Account['mode']

/** The RFC 9457 problem document every v1 error answers. */
export type Problem = import('./generated/openapi.ts').components['schemas']['Problem']

/** A pet in the Swagger Petstore v2 shape (camelCase), as `PUT /v2/pet` answers it. */
export type PetstorePet = Json<operations['updatePet']['responses'][200]>
/** The body of `PUT /v2/pet`: the whole Petstore pet; `id` names the pet to replace. */
export type PetstorePetUpdate = Json<operations['updatePet']['requestBody']> & { id: number }
