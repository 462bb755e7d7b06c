/** `petctl listen`: the live event stream, printed and optionally forwarded (../listen-session.ts). */
import { leaf, type Register, type Run, untilInterrupted } from '../command.ts'
import { configFile } from '../config.ts'
import { UsageError } from '../errors.ts'
import { SECRET_FORMAT, sessionSecret } from '../listen-secret.ts'
import { listen } from '../listen-session.ts'
import { commaList } from '../parse.ts'

interface ListenFlags {
  events?: string
  forwardTo?: string
  secret?: string
  newSecret?: boolean
  lastEventId?: string
}

export const registerListen: Register = (program, io) => {
  leaf(program, io, 'listen', {
    description: 'print events as they happen; forward them, signed, to a local server',
    examples: [
      'petctl listen --events pet.*',
      'petctl listen --forward-to http://localhost:3000/webhooks',
      'petctl listen --forward-to http://localhost:3000/webhooks --new-secret',
    ],
    action: listenCommand,
  })
    .option('--events <types>', 'comma-separated types or wildcards, e.g. pet.*,user.deleted (default all)')
    .option('--forward-to <url>', 'POST each event there, signed as a webhook delivery')
    .option(
      '--new-secret',
      "sign with a new secret from now on (default: the one kept for this key's account in petctl's config file)",
    )
    .option('--secret <whsec>', 'sign with this secret, and keep it for the next sessions')
    .option('--last-event-id <id>', 'first replay the events after this one')
}

async function listenCommand(run: Run<ListenFlags>): Promise<void> {
  const { flags, io } = run
  const events = flags.events === undefined ? undefined : commaList(flags.events)
  let forwardTo: URL | undefined
  if (flags.forwardTo !== undefined) {
    forwardTo = URL.canParse(flags.forwardTo) ? new URL(flags.forwardTo) : undefined
    if (forwardTo === undefined || !/^https?:$/.test(forwardTo.protocol))
      throw new UsageError(`--forward-to must be an http:// or https:// URL, not ${flags.forwardTo}.`)
  }
  if (flags.secret !== undefined && !SECRET_FORMAT.test(flags.secret))
    throw new UsageError('--secret must be whsec_ followed by base64, as petctl listen prints it.')
  if (flags.secret !== undefined && flags.newSecret === true)
    throw new UsageError('Give --secret or --new-secret, not both.')
  if (flags.lastEventId !== undefined && !flags.lastEventId.startsWith('evt_'))
    throw new UsageError(`--last-event-id takes an event id (evt_…), not ${flags.lastEventId}.`)
  const client = run.client('key')
  const account = await client.account.retrieve()
  const { secret, note } = sessionSecret({
    file: configFile(flags.config, io.env),
    accountId: account.id,
    apiKey: run.service.apiKey ?? '',
    baseUrl: run.service.baseUrl ?? '',
    given: flags.secret,
    renew: flags.newSecret === true,
  })
  await untilInterrupted(io, (signal) =>
    listen(
      client,
      {
        events: events === undefined || events.length === 0 ? undefined : events,
        forwardTo,
        secret,
        secretNote: note,
        mode: account.mode,
        json: run.json,
        lastEventId: flags.lastEventId,
      },
      { out: io.out, err: io.err, signal },
    ),
  )
}
