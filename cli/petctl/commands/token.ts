/** `petctl token`: an OAuth access token, for scripts and curl. */
import { leaf, type Register, type Run } from '../command.ts'

export const registerToken: Register = (program, io) => {
  leaf(program, io, 'token', {
    description: 'print an OAuth access token (client credentials grant)',
    examples: [
      'PET_SERVICE_CLIENT_ID=pet_ci_... PET_SERVICE_CLIENT_SECRET=pet_cs_... petctl token --scope write:pets',
    ],
    action: token,
  })
}

async function token(run: Run<object>): Promise<void> {
  const issued = await run.client('oauth').oauth.token(run.options)
  run.io.out(run.json ? JSON.stringify(issued, null, 2) : issued.access_token)
}
