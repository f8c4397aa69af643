import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { GENERATED_PATH, renderTypes, servedDocument } from '../scripts/openapi-types.js'

/*
 * The client's REST types are what openapi-typescript makes of the document
 * the service serves now: a route or field changed without
 * `npm run generate -w packages/client` fails here.
 */

t.test('the checked-in REST types are generated from the served OpenAPI document', async (t) => {
  const checkedIn = readFileSync(fileURLToPath(new URL(`../${GENERATED_PATH}`, import.meta.url)), 'utf8')
  const fresh = await renderTypes(await servedDocument())
  const changed = fresh.split('\n').findIndex((line, i) => line !== checkedIn.split('\n')[i])
  t.equal(changed, -1, changed === -1 ? 'identical' : `differs from line ${changed + 1}; run npm run generate -w packages/client`)
  t.equal(fresh, checkedIn)
})

t.test('the generated types name every path the client calls', async (t) => {
  const generated = readFileSync(fileURLToPath(new URL(`../${GENERATED_PATH}`, import.meta.url)), 'utf8')
  for (const path of ['/people', '/person', '/person/{id}', '/person/{id}/friends', '/person/{id}/friends/{friendId}', '/person/{id}/messages', '/message', '/message/{id}', '/api-keys', '/api-keys/{id}', '/api-keys/{id}/usage', '/users', '/users/{id}', '/users/me', '/auth/login', '/auth/password']) {
    t.ok(generated.includes(`    "${path}": {`), path)
  }
})
