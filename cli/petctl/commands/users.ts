/** `petctl users`: the pet owners of your account (v1, API key). */
import { group, leaf, type Register, type Run } from '../command.ts'
import { UsageError } from '../errors.ts'
import { printList, show, showDeleted } from '../output.ts'
import { fields, integer, userId } from '../parse.ts'

interface UserFlags {
  name?: string
  email?: string
  phone?: string
}

interface ListFlags {
  limit?: string
  startingAfter?: string
  email?: string
  all?: boolean
}

const USER_FIELDS = { name: 'name', email: 'email', phone: 'phone' }
const COLUMNS = ['id', 'name', 'email', 'phone', 'created_at']

export const registerUsers: Register = (program, io) => {
  const users = group(program, 'users', 'users, the pet owners (v1, API key)', [
    'petctl users list --email ann@example.com',
  ])
  leaf(users, io, 'create', {
    description: 'create a user (POST /v1/user)',
    examples: ['petctl users create --name "Ann Lee" --email ann@example.com --phone +441234567'],
    action: create,
  })
    .option('--name <name>', 'required')
    .option('--email <email>')
    .option('--phone <phone>')
    .option('--idempotency-key <key>', 'one is generated otherwise')
  leaf(users, io, 'get', {
    description: 'show a user (GET /v1/user/ID)',
    examples: ['petctl users get usr_... --json'],
    action: get,
  }).argument('<id>', 'the user id (usr_…)')
  leaf(users, io, 'update', {
    description: 'change some fields of a user (PATCH /v1/user/ID)',
    examples: ["petctl users update usr_... --email ann@example.org --phone ''"],
    action: update,
  })
    .argument('<id>', 'the user id (usr_…)')
    .option('--name <name>')
    .option('--email <email>', '"" clears it')
    .option('--phone <phone>', '"" clears it')
    .option('--if-match <etag>', 'refuse (412) if the user changed since this ETag')
  leaf(users, io, 'delete', {
    description: 'delete a user (refused while pets name it as owner)',
    examples: ['petctl users delete usr_...'],
    action: remove,
  })
    .argument('<id>', 'the user id (usr_…)')
    .option('--if-match <etag>', 'refuse (412) if the user changed since this ETag')
  leaf(users, io, 'list', {
    description: 'list users, newest first (GET /v1/user)',
    examples: ['petctl users list --limit 20', 'petctl users list --all --json'],
    action: list,
  })
    .option('--limit <n>', 'page size, 1-100 (default 10)')
    .option('--starting-after <id>', 'the last id of the previous page')
    .option('--email <email>', 'only users with this email')
    .option('--all', 'every page (a progress count on a terminal)')
}

async function create(run: Run<UserFlags>): Promise<void> {
  const { flags } = run
  if (flags.name === undefined) throw new UsageError('petctl users create needs --name NAME.')
  show(
    run,
    await run.client('key').users.create({ ...fields(flags, USER_FIELDS), name: flags.name }, run.options),
  )
}

async function get(run: Run<object>, id: string): Promise<void> {
  show(run, await run.client('key').users.get(userId(id), run.options))
}

async function update(run: Run<UserFlags>, id: string): Promise<void> {
  const user = userId(id)
  const changes = fields(run.flags, USER_FIELDS)
  if (Object.keys(changes).length === 0)
    throw new UsageError('Nothing to change: give --name, --email or --phone.')
  show(run, await run.client('key').users.update(user, changes, run.options))
}

async function remove(run: Run<object>, id: string): Promise<void> {
  showDeleted(run, 'user', await run.client('key').users.delete(userId(id), run.options))
}

async function list(run: Run<ListFlags>): Promise<void> {
  const { flags } = run
  const params = {
    ...(flags.limit === undefined ? {} : { limit: integer(flags.limit, '--limit', 1) }),
    ...(flags.startingAfter === undefined ? {} : { starting_after: userId(flags.startingAfter) }),
    ...(flags.email === undefined ? {} : { email: flags.email }),
  }
  const pages = run
    .client('key')
    .users.list({ ...(flags.all === true ? { limit: 100 } : {}), ...params }, run.options)
  await printList(pages, flags.all === true, 'users', COLUMNS, run)
}
