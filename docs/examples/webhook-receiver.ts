// A webhook receiver for trying deliveries on your machine (docs/webhooks.md): it checks each
// delivery's Standard Webhooks signature against WEBHOOK_SECRET on the raw body, prints the
// event, and answers 204 (or 400 naming why it refused one).
//
//   WEBHOOK_SECRET=whsec_… npx tsx docs/examples/webhook-receiver.ts http://localhost:3000/webhooks
import { createServer } from 'node:http'
import { WebhookVerificationError, webhooks } from '@pet-service/client'

const url = new URL(process.argv[2] ?? 'http://localhost:3000/webhooks')
const secret = process.env.WEBHOOK_SECRET
if (secret === undefined || secret === '') {
  console.error('Set WEBHOOK_SECRET to the signing secret (whsec_…) of the endpoint or of petctl listen.')
  process.exit(2)
}

createServer(async (request, response) => {
  if (request.method !== 'POST' || request.url !== url.pathname) {
    response.writeHead(404).end()
    return
  }
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  try {
    // Verify the bytes as they came, before parsing: re-serialised JSON would not match.
    const event = await webhooks.verify(Buffer.concat(chunks), request.headers, secret)
    console.log(`${event.type} ${event.id} ${JSON.stringify(event.data.object)}`)
    // Any 2xx within 10 s is a delivery; anything else is retried.
    response.writeHead(204).end()
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) throw error
    console.log(`refused a delivery: ${error.reason}`)
    response.writeHead(400).end(error.reason)
  }
  // No host: every interface, IPv4 and IPv6, so localhost reaches it whichever it resolves to.
}).listen(Number(url.port), () => console.log(`Receiving webhooks at ${url.href}`))
