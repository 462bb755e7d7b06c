/**
 * A Server-Sent Events parser, as the HTML standard defines the `text/event-stream` format
 * (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation):
 * lines end in CRLF, LF or CR; `:` starts a comment (the service's heartbeats); `data` lines
 * accumulate; a blank line dispatches. Fed chunks of text as they arrive, in any split.
 */

export interface SseMessage {
  /** The last `id` field seen (in this message or an earlier one), as Last-Event-ID resumes from. */
  id: string | undefined
  /** The `event` field; `message` when none was sent. */
  event: string
  data: string
}

export class SseParser {
  private buffer = ''
  private pendingCr = false
  private data: string[] = []
  private event = ''
  private id: string | undefined
  private first = true

  constructor(
    private readonly callbacks: {
      message(message: SseMessage): void
      /** A comment line, e.g. a heartbeat: proof the connection is alive. */
      comment?(text: string): void
      /** The `retry` field: the reconnection delay the server asks for, in milliseconds. */
      retry?(ms: number): void
    },
  ) {}

  feed(chunk: string): void {
    let text = chunk
    if (this.first && text.length > 0) {
      this.first = false
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1)
    }
    // A CR that ended the previous chunk already ended its line: skip a LF right after it.
    if (this.pendingCr && text.startsWith('\n')) text = text.slice(1)
    this.pendingCr = false
    this.buffer += text
    let start = 0
    for (let i = 0; i < this.buffer.length; i++) {
      const c = this.buffer.charCodeAt(i)
      if (c !== 0x0a && c !== 0x0d) continue
      this.line(this.buffer.slice(start, i))
      if (c === 0x0d) {
        if (i + 1 === this.buffer.length) this.pendingCr = true
        else if (this.buffer.charCodeAt(i + 1) === 0x0a) i++
      }
      start = i + 1
    }
    this.buffer = this.buffer.slice(start)
  }

  private line(line: string): void {
    if (line === '') {
      this.dispatch()
      return
    }
    if (line.startsWith(':')) {
      this.callbacks.comment?.(line.slice(1).trimStart())
      return
    }
    const colon = line.indexOf(':')
    const field = colon === -1 ? line : line.slice(0, colon)
    let value = colon === -1 ? '' : line.slice(colon + 1)
    if (value.startsWith(' ')) value = value.slice(1)
    if (field === 'data') this.data.push(value)
    else if (field === 'event') this.event = value
    else if (field === 'id' && !value.includes('\0')) this.id = value
    else if (field === 'retry' && /^\d+$/.test(value)) this.callbacks.retry?.(Number(value))
  }

  private dispatch(): void {
    if (this.data.length > 0) {
      this.callbacks.message({ id: this.id, event: this.event || 'message', data: this.data.join('\n') })
    }
    this.data = []
    this.event = ''
    // The last event id is kept across messages (the standard's "last event ID buffer").
  }
}
