import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ApiError } from '../errors/api-error.ts'
import { problemPayload } from '../errors/error-handler.ts'

/**
 * The memory that answers still on their way to clients may hold (RESPONSE_BUFFER_BYTES): a
 * client that reads slowly, or not at all, keeps what the kernel has not taken of its answer in
 * this process. Bounded in all, and per client address to a quarter of that, so that one
 * address cannot take it all. An address holding nothing, in a process holding nothing, may
 * always take one answer, however large: otherwise an answer larger than the budget could
 * never be served.
 */
export class AnswerBudget {
  readonly perAddressBytes: number
  #held = 0
  readonly #byAddress = new Map<string, number>()

  constructor(readonly totalBytes: number) {
    this.perAddressBytes = Math.floor(totalBytes / 4)
  }

  /** Reserves `bytes` for an answer to `address`; names the limit that refuses it, if one does. */
  reserve(address: string, bytes: number): 'address' | 'total' | undefined {
    const ofAddress = this.#byAddress.get(address) ?? 0
    if (ofAddress > 0 && ofAddress + bytes > this.perAddressBytes) return 'address'
    if (this.#held > 0 && this.#held + bytes > this.totalBytes) return 'total'
    this.#held += bytes
    this.#byAddress.set(address, ofAddress + bytes)
    return undefined
  }

  release(address: string, bytes: number): void {
    this.#held -= bytes
    const left = (this.#byAddress.get(address) ?? 0) - bytes
    if (left > 0) this.#byAddress.set(address, left)
    else this.#byAddress.delete(address)
  }

  /** Bytes reserved now, in all. */
  get heldBytes(): number {
    return this.#held
  }
}

/** Seconds a refused client is asked to wait: about what a stalled answer takes to be cut off. */
const RETRY_AFTER_SECONDS = 5

/**
 * Holds `bytes` of the budget for the request's answer until its connection is done with it
 * (sent, or cut off); throws the 429 or 503 problem when the budget has no room.
 */
export function holdForAnswer(request: FastifyRequest, reply: FastifyReply, bytes: number): void {
  const refusal = reserveForAnswer(request, reply, bytes)
  if (refusal !== undefined) throw refusal
}

function reserveForAnswer(request: FastifyRequest, reply: FastifyReply, bytes: number): ApiError | undefined {
  const budget = request.server.deps.answers
  const address = request.ip
  const refused = budget.reserve(address, bytes)
  if (refused !== undefined) return refusal(refused)
  let released = false
  const release = () => {
    if (released) return
    released = true
    budget.release(address, bytes)
  }
  reply.raw.once('close', release)
  reply.raw.once('finish', release)
  return undefined
}

function refusal(limit: 'address' | 'total'): ApiError {
  const headers = { 'retry-after': String(RETRY_AFTER_SECONDS) }
  return limit === 'address'
    ? new ApiError(
        'too_many_downloads',
        `Answers still on their way to your address hold as much of this server's memory as one address may; read them (or close their connections) and retry in ${RETRY_AFTER_SECONDS} s.`,
        { headers },
      )
    : new ApiError(
        'service_unavailable',
        `The service is busy sending large answers to other clients; retry in ${RETRY_AFTER_SECONDS} s.`,
        { headers },
      )
}

/** Answers below this are taken by the kernel's socket buffers at once: not worth counting. */
const SMALL_ANSWER_BYTES = 64 * 1024

/** Headers of the answer a refusal replaces that must not describe the problem document. */
const ANSWER_HEADERS = ['etag', 'last-modified', 'cache-control', 'content-location', 'link']

/**
 * Counts every large answer serialised for a read (a list, a page of events, a dashboard page)
 * against the budget, replacing it with the problem when the budget has no room. Writes are
 * left alone: their answers are small, and refusing one after the change would hide that it
 * happened. Streams (images) and shared buffers hold the budget themselves or need none.
 */
export function registerAnswerBudget(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    if (typeof payload !== 'string' || payload.length <= SMALL_ANSWER_BYTES / 3) return payload
    if (request.method !== 'GET') return payload
    const bytes = Buffer.byteLength(payload)
    if (bytes <= SMALL_ANSWER_BYTES) return payload
    const refused = reserveForAnswer(request, reply, bytes)
    if (refused === undefined) return payload
    for (const name of ANSWER_HEADERS) reply.removeHeader(name)
    return problemPayload(request, reply, refused)
  })
}
