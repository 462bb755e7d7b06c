import { get, type IncomingMessage } from 'node:http'

/** A minimal Server-Sent Events reader over fetch, for tests: messages and comments, in order. */
export interface SseMessage {
  id?: string
  event?: string
  data?: string
  retry?: string
  /** The text of a comment line (`: heartbeat`). */
  comment?: string
}

export interface SseConnection {
  response: SseResponse
  /** The next message with data (comments and retry lines skipped); fails after `timeoutMs`. */
  next(timeoutMs?: number): Promise<SseMessage>
  /** The next comment line. */
  nextComment(timeoutMs?: number): Promise<string>
  /** Resolves when the server ends the stream (after any messages still unread). */
  ended(timeoutMs?: number): Promise<void>
  close(): void
}

/** The answer's status line and headers; `json()` reads a non-stream body (a problem). */
export interface SseResponse {
  status: number
  headers: { get(name: string): string | null }
  json(): Promise<unknown>
}

/**
 * Opens a stream on a connection of its own (node:http, no agent): fetch's pool may open a
 * spare connection that never carries a request, and such a connection holds the server's
 * close open until it times out.
 */
export async function openSse(url: string, headers: Record<string, string>): Promise<SseConnection> {
  const controller = new AbortController()
  const incoming = await new Promise<IncomingMessage>((resolve, reject) => {
    get(url, { headers, agent: false, signal: controller.signal }, resolve).once('error', reject)
  })
  const status = incoming.statusCode ?? 0
  const response: SseResponse = {
    status,
    headers: { get: (name) => String(incoming.headers[name.toLowerCase()] ?? '') || null },
    json: async () => {
      let text = ''
      for await (const chunk of incoming) text += String(chunk)
      return JSON.parse(text)
    },
  }
  const queue: SseMessage[] = []
  let done = status !== 200
  let failure: unknown
  let wake: (() => void) | undefined

  if (status === 200) {
    incoming.setEncoding('utf8')
    let buffer = ''
    incoming.on('data', (chunk: string) => {
      buffer += chunk
      for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
        queue.push(parseBlock(buffer.slice(0, end)))
        buffer = buffer.slice(end + 2)
      }
      wake?.()
    })
    const finish = (error?: unknown) => {
      if (error !== undefined && !controller.signal.aborted) failure = error
      done = true
      wake?.()
    }
    incoming.once('end', () => finish())
    incoming.once('error', finish)
    incoming.once('close', () => finish())
  }

  async function take(
    accept: (m: SseMessage) => boolean,
    timeoutMs: number,
    what: string,
  ): Promise<SseMessage> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const index = queue.findIndex(accept)
      if (index !== -1) return queue.splice(0, index + 1).at(-1)!
      if (done) throw new Error(`the stream ended before ${what}${failure ? `: ${String(failure)}` : ''}`)
      const left = deadline - Date.now()
      if (left <= 0) throw new Error(`no ${what} within ${timeoutMs} ms`)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left)
        wake = () => {
          clearTimeout(timer)
          resolve()
        }
      })
    }
  }

  return {
    response,
    next: (timeoutMs = 10_000) => take((m) => m.data !== undefined, timeoutMs, 'event'),
    nextComment: async (timeoutMs = 10_000) =>
      (await take((m) => m.comment !== undefined, timeoutMs, 'comment')).comment!,
    async ended(timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs
      while (!done) {
        if (Date.now() > deadline) throw new Error(`the stream did not end within ${timeoutMs} ms`)
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, deadline - Date.now())
          wake = () => {
            clearTimeout(timer)
            resolve()
          }
        })
      }
    },
    close: () => {
      controller.abort()
      incoming.destroy()
    },
  }
}

function parseBlock(block: string): SseMessage {
  const message: SseMessage = {}
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) {
      message.comment = line.slice(1).trim()
      continue
    }
    const colon = line.indexOf(':')
    const field = colon === -1 ? line : line.slice(0, colon)
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '')
    if (field === 'id' || field === 'event' || field === 'retry') message[field] = value
    else if (field === 'data') message.data = message.data === undefined ? value : `${message.data}\n${value}`
  }
  return message
}
