/** How a command prints the API's answer: its JSON with --json, else for people (format.ts). */
import type { Run } from './command.ts'
import { type Row, record, table } from './format.ts'

export function show(run: Run<object>, object: object): void {
  run.io.out(run.json ? JSON.stringify(object, null, 2) : record(object as Row))
}

export function showDeleted(run: Run<object>, noun: string, deleted: { id: string | number }): void {
  run.io.out(run.json ? JSON.stringify(deleted, null, 2) : `Deleted ${noun} ${deleted.id}.`)
}

/** A delivery queued by `events resend` or `webhooks test` (202): where to watch it. */
export function showQueued(run: Run<object>, queued: { endpoint_id: string; event_id: string }): void {
  const { endpoint_id: endpoint, event_id: event } = queued
  run.io.out(
    run.json
      ? JSON.stringify(queued, null, 2)
      : `Queued ${event} for ${endpoint}: petctl webhooks deliveries ${endpoint} --event-id ${event} shows its attempts.`,
  )
}

/**
 * One page (as the API answered it), or with --all every item of every page. The table shows
 * `columns` of each item, or of what `view` makes of it; --json shows the items as they came.
 */
export async function printList<T extends object>(
  list: AsyncIterable<T> & PromiseLike<{ data: T[]; has_more: boolean }>,
  all: boolean,
  noun: string,
  columns: string[],
  { io, json }: Run<object>,
  view: (item: T) => Row = (item) => item as Row,
): Promise<void> {
  if (!all) {
    const page = await list
    if (json) io.out(JSON.stringify(page, null, 2))
    else {
      io.out(page.data.length === 0 ? `No ${noun}.` : table(page.data.map(view), columns))
      if (page.has_more) io.out(`(more: --starting-after ${String((page.data.at(-1) as Row).id)}, or --all)`)
    }
    return
  }
  const items: T[] = []
  for await (const item of list) {
    items.push(item)
    if (io.progress && items.length % 50 === 0) io.err(`\rFetched ${items.length} ${noun}…`)
  }
  if (io.progress) io.err(`\rFetched ${items.length} ${noun}.  \n`)
  if (json) io.out(JSON.stringify(items, null, 2))
  else io.out(items.length === 0 ? `No ${noun}.` : table(items.map(view), columns))
}
