import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { GENERATED_PATH, renderTypes, servedDocument } from './openapi-types.js'

/*
 * Regenerates the client's REST types from the served OpenAPI document.
 * `npm run generate -w packages/client` uses the server of this checkout;
 * `... -- http://host:port` reads a running one instead.
 */
const target = fileURLToPath(new URL(`../${GENERATED_PATH}`, import.meta.url))
mkdirSync(dirname(target), { recursive: true })
writeFileSync(target, await renderTypes(await servedDocument(process.argv[2])))
process.stdout.write(`wrote ${GENERATED_PATH}\n`)
