import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { ConnectionError } from 'fastify'
import { PROBLEM_CONTENT_TYPE } from '../errors/error-handler.ts'
import { ERRORS, type ErrorCode, problemType } from '../errors/registry.ts'
import { randomIdText } from '../lib/ids.ts'

/** How long a client gets to read the answer before the connection is cut. */
const LINGER_MS = 2_000

const answered = new WeakSet<Socket>()

function problemFor(code: string | undefined): { code: ErrorCode; detail: string } {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return {
        code: 'headers_too_large',
        detail:
          'The request line and header fields are larger than the 16 KiB this server reads; send smaller headers.',
      }
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { code: 'request_timeout', detail: 'The request did not arrive in full in time; send it again.' }
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return {
        code: 'invalid_request',
        detail:
          'Content-Length must be one decimal number, and not be sent with Transfer-Encoding (RFC 9112 §6).',
      }
    case 'HPE_INVALID_TRANSFER_ENCODING':
    case 'HPE_INVALID_CHUNK_SIZE':
      return {
        code: 'invalid_request',
        detail: 'The chunked body or its Transfer-Encoding header is malformed.',
      }
    default:
      return {
        code: 'invalid_request',
        detail: `The request is not valid HTTP/1.1${code === undefined ? '' : ` (${code})`}: check the request line and the header fields.`,
      }
  }
}

/**
 * Fastify's clientErrorHandler: a request Node's HTTP parser refused never reaches a route, so it
 * is answered here, by hand, with the same problem document as every other error (RFC 9457), a
 * Request-Id, and `Connection: close`, as Node itself does for these errors
 * (https://nodejs.org/api/http.html#event-clienterror). The parser cannot go on after an error,
 * so the connection is closed once the client has had a moment to read the answer.
 */
export function answerClientError(error: ConnectionError, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed || answered.has(socket)) return
  answered.add(socket)
  // A response already on its way on this connection must not be corrupted by a second one.
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage
  if (socket.writable && !inFlight?.headersSent) {
    const { code, detail } = problemFor(error.code)
    const { status, title } = ERRORS[code]
    const requestId = `req_${randomIdText(20)}`
    const body = JSON.stringify({
      type: problemType(code),
      title,
      status,
      detail,
      code,
      request_id: requestId,
    })
    // The answer to HEAD has the headers of the answer to GET, and no body (RFC 9110 §9.3.2).
    // Node passes the bytes it could not parse as a Buffer (https://nodejs.org/api/http.html#event-clienterror).
    const raw: unknown = error.rawPacket
    const head = Buffer.isBuffer(raw) && raw.subarray(0, 5).toString('latin1') === 'HEAD '
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nRequest-Id: ${requestId}\r\nConnection: close\r\n\r\n${head ? '' : body}`,
    )
    // Read and drop what else the client sends, so closing does not reset the connection
    // before the answer is read.
    socket.resume()
  }
  setTimeout(() => socket.destroy(), LINGER_MS).unref()
}
