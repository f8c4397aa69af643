import { deflateRawSync, inflateRawSync } from 'node:zlib'

/*
 * A stored answer's body, deflated: JSON text repeats itself (field names,
 * escapes: a quote is two bytes on the wire), so a record takes less room
 * than the response it replays. A message of 10,000 random printable
 * characters: 10.2 KiB as sent, about 8.5 KiB stored.
 */

/** Far above any answer the service builds (MAX_RESPONSE_BYTES is 8 MiB by default): a damaged row cannot inflate without bound. */
const MOST_BYTES = 64 * 1024 * 1024

export const packBody = (body: Uint8Array): Buffer => deflateRawSync(body, { level: 6 })

export const unpackBody = (packed: Uint8Array): Buffer => inflateRawSync(packed, { maxOutputLength: MOST_BYTES })
