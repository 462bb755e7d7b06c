import { API_KEY_PREFIX, TEST_API_KEY_PREFIX } from '../../access/credential-kinds.ts'
import { type Html, html } from '../../web/html.ts'

/**
 * Copy-paste examples for the Getting started panel and the new-key page, filled with the
 * service's own base URL (and the key when it was just created; otherwise read from an
 * environment variable, so the examples never encourage pasting secrets into code). In the
 * sandbox they ask for a sandbox key, which is all that reaches the sandbox's data.
 */
export function codeBlock(id: string, code: string): Html {
  return html`<div class="code"><pre id="${id}"><code>${code}</code></pre><button type="button" class="btn-copy" data-copy="${id}" hidden>Copy</button></div>`
}

export function examples(
  baseUrl: string,
  apiKey?: string,
  idPrefix = 'ex',
  mode: 'live' | 'sandbox' = 'live',
): Html {
  const keyShell = apiKey ?? '$PET_SERVICE_API_KEY'
  const placeholder =
    mode === 'sandbox'
      ? `${TEST_API_KEY_PREFIX}...   # a sandbox key, from the API keys page`
      : `${API_KEY_PREFIX}...   # from the API keys page`
  const keyExport = apiKey === undefined ? `export PET_SERVICE_API_KEY=${placeholder}\n` : ''
  const curl = `${keyExport}curl -u ${keyShell}: ${baseUrl}/v1/pet \\
  -d name=Rex -d species=dog -d breed=collie

curl -u ${keyShell}: "${baseUrl}/v1/pet?status=available&limit=10"`
  const tsKey = apiKey === undefined ? 'process.env.PET_SERVICE_API_KEY' : JSON.stringify(apiKey)
  const ts = `const apiKey = ${tsKey}
const auth = 'Basic ' + btoa(apiKey + ':')

const res = await fetch('${baseUrl}/v1/pet', {
  method: 'POST',
  headers: { Authorization: auth, 'Content-Type': 'application/json' },
  body: JSON.stringify({ name: 'Rex', species: 'dog', breed: 'collie' }),
})
const pet = await res.json()
console.log(res.status, pet.id, pet.status)`
  const pyKey = apiKey === undefined ? 'os.environ["PET_SERVICE_API_KEY"]' : JSON.stringify(apiKey)
  const py = `import base64, json, os, urllib.request

api_key = ${pyKey}
auth = "Basic " + base64.b64encode(f"{api_key}:".encode()).decode()

req = urllib.request.Request(
    "${baseUrl}/v1/pet",
    data=json.dumps({"name": "Rex", "species": "dog", "breed": "collie"}).encode(),
    headers={"Authorization": auth, "Content-Type": "application/json"},
    method="POST",
)
with urllib.request.urlopen(req) as res:
    pet = json.load(res)
    print(res.status, pet["id"], pet["status"])`
  return html`<div data-tabs>
  <section data-tab="curl" id="${idPrefix}-curl-panel"><h3>curl</h3>${codeBlock(`${idPrefix}-curl`, curl)}</section>
  <section data-tab="TypeScript" id="${idPrefix}-ts-panel"><h3>TypeScript (Node 18+, fetch)</h3>${codeBlock(`${idPrefix}-ts`, ts)}</section>
  <section data-tab="Python" id="${idPrefix}-py-panel"><h3>Python 3 (standard library)</h3>${codeBlock(`${idPrefix}-py`, py)}</section>
</div>`
}
