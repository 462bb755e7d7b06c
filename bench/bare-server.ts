// The ceiling: a bare node:http server answering a small JSON body, run in its own process
// under the same conditions as the service (same Node, same loader, same loopback).
import { createServer } from 'node:http'

const body = JSON.stringify({ id: 1, object: 'pet', name: 'Rex', status: 'available' })
const port = Number(process.env.PORT ?? 0)

const server = createServer((request, response) => {
  // Read (and drop) any body, as a real handler would before answering.
  request.resume()
  request.on('end', () => {
    response.writeHead(200, { 'content-type': 'application/json; charset=utf-8' })
    response.end(body)
  })
})
server.keepAliveTimeout = 72_000
server.listen(port, '127.0.0.1')
process.on('SIGTERM', () => server.close(() => process.exit(0)))
