/**
 * `petctl listen`: the live event stream in a terminal, and each event forwarded to a local
 * server as a real webhook delivery would reach it (as `stripe listen --forward-to` does), so a
 * receiver can be developed without a public URL.
 */
import type { Event, PetService, ReconnectInfo } from '../../clients/typescript/src/index.ts'
import { webhooks } from '../../clients/typescript/src/index.ts'

export interface ListenSettings {
  /** Event types or wildcards (`pet.*`); all when undefined. */
  events: string[] | undefined
  /** Where each event is POSTed, signed; nowhere when undefined. */
  forwardTo: URL | undefined
  /** The `whsec_…` secret the forwarded deliveries are signed with. */
  secret: string
  /** Whether it is new, and where it is kept (../listen-secret.ts), printed after it. */
  secretNote: string
  /** The key's account's mode, named in the banner so no one mistakes test events for live ones. */
  mode: 'live' | 'sandbox'
  json: boolean
  /** Resume after this event instead of starting from now. */
  lastEventId: string | undefined
}

export interface ListenIo {
  out(text: string): void
  err(text: string): void
  signal: AbortSignal
}

/** A real delivery gives up after 10 s; so does a forwarded one. */
const FORWARD_TIMEOUT_MS = 10_000
/** The delivery worker's User-Agent, marked as coming from petctl. */
const USER_AGENT = 'pet-service-webhooks/1 (petctl listen)'

export async function listen(client: PetService, settings: ListenSettings, io: ListenIo): Promise<void> {
  const what = settings.events === undefined ? 'every event' : `events ${settings.events.join(', ')}`
  io.err(
    `Listening for ${what}${settings.lastEventId === undefined ? '' : ` after ${settings.lastEventId}`} of the ${settings.mode === 'sandbox' ? 'SANDBOX (test data)' : 'live account'}. Ctrl-C to stop.`,
  )
  io.err(`Webhook signing secret of this session: ${settings.secret} ${settings.secretNote}`)
  if (settings.forwardTo !== undefined)
    io.err(`Forwarding each event to ${settings.forwardTo.href}, signed with it.`)

  const stream = client.events.stream(settings.events === undefined ? {} : { type: settings.events }, {
    signal: io.signal,
    ...(settings.lastEventId === undefined ? {} : { lastEventId: settings.lastEventId }),
    onReconnect: (info) => io.err(reconnectNotice(info)),
  })
  for await (const { event, data } of stream.messages()) {
    io.out(settings.json ? data : line(event))
    if (settings.forwardTo !== undefined) {
      const result = await forward(settings.forwardTo, event.id, data, settings.secret, io.signal)
      if (settings.json) io.err(result)
      else io.out(result)
    }
  }
}

/** time, type, event id, object id: one line per event. */
export function line(event: Event): string {
  const objectId = (event.data.object as { id?: unknown }).id
  return [
    event.created_at,
    event.type.padEnd(12),
    event.id,
    objectId === undefined ? '-' : String(objectId),
  ].join('  ')
}

function reconnectNotice(info: ReconnectInfo): string {
  const from = info.lastEventId === undefined ? '' : ` after ${info.lastEventId}`
  return `Connection lost (${info.error.message}); reconnecting in ${(info.delayMs / 1000).toFixed(1)} s, resuming${from}.`
}

/** POSTs the event's JSON, byte for byte, with the Standard Webhooks headers; says what came back. */
async function forward(
  url: URL,
  id: string,
  body: string,
  secret: string,
  signal: AbortSignal,
): Promise<string> {
  const headers = await webhooks.sign(body, secret, { id })
  const started = performance.now()
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'user-agent': USER_AGENT },
      body,
      redirect: 'manual',
      signal: AbortSignal.any([signal, AbortSignal.timeout(FORWARD_TIMEOUT_MS)]),
    })
    await response.arrayBuffer().catch(() => undefined)
    const ms = Math.round(performance.now() - started)
    return `  -> POST ${url.href} ${response.status} ${response.statusText} (${ms} ms)`.trimEnd()
  } catch (error) {
    if (signal.aborted) return `  -> POST ${url.href} stopped`
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error
    const reason =
      error instanceof Error && error.name === 'TimeoutError'
        ? `no answer within ${FORWARD_TIMEOUT_MS / 1000} s`
        : cause instanceof Error
          ? cause.message
          : String(cause)
    return `  -> POST ${url.href} failed: ${reason}`
  }
}
