/** `petctl whoami`: which account, live or sandbox, the API key reaches. */
import { leaf, type Register, type Run } from '../command.ts'

export const registerWhoami: Register = (program, io) => {
  leaf(program, io, 'whoami', {
    description: "print the API key's account and whether it is live or a sandbox",
    examples: ['PET_SERVICE_API_KEY=pet_sk_test_... petctl whoami'],
    action: whoami,
  })
}

async function whoami(run: Run<object>): Promise<void> {
  const account = await run.client('key').account.retrieve(run.options)
  if (run.json) {
    run.io.out(JSON.stringify(account, null, 2))
    return
  }
  const mode =
    account.mode === 'sandbox'
      ? `sandbox (test data) of ${account.live_account_id ?? 'a live account'}`
      : 'live'
  run.io.out(`${account.id}  ${mode}`)
}
