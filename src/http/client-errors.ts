import type { Socket } from 'node:net'
import { ApiError } from '../errors/api-error.ts'
import { PROBLEM_CONTENT_TYPE, problemDocument } from '../errors/error-handler.ts'
import { newRequestId } from './request-id.ts'

/**
 * Fastify's `clientErrorHandler`: what Node's HTTP server reports before a request exists — a
 * client too slow to send its request (HTTP_HEADERS_TIMEOUT_SECONDS, HTTP_REQUEST_TIMEOUT_SECONDS),
 * headers too large, bytes that are not HTTP — answered as a problem document, then the
 * connection closed (https://nodejs.org/api/http.html#event-clienterror).
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const problem = toProblem(error.code)
  if (socket.writable) {
    const requestId = newRequestId()
    const body = JSON.stringify(problemDocument(problem, requestId))
    socket.write(
      `HTTP/1.1 ${problem.status} ${STATUS_TEXT[problem.status] ?? 'Bad Request'}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nRequest-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    )
  }
  socket.destroy()
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
}

function toProblem(code: string | undefined): ApiError {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return new ApiError(
      'request_timeout',
      'The request did not arrive in time: its headers or body came too slowly. Send it again, all at once.',
    )
  }
  if (code === 'HPE_HEADER_OVERFLOW') {
    return new ApiError('headers_too_large', 'The request headers are larger than 16 KiB in all.')
  }
  return new ApiError('invalid_request', 'The request is not valid HTTP/1.1.')
}
