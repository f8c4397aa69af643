import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const root = fileURLToPath(new URL('../../..', import.meta.url))
const read = (path: string): string => readFileSync(join(root, path), 'utf8')
const README = read('README.md')

/** The text from a `## ` heading to the next one. */
const section = (markdown: string, heading: string): string => {
  const start = markdown.indexOf(`\n## ${heading}\n`)
  if (start < 0) throw new Error(`no section "${heading}"`)
  const end = markdown.indexOf('\n## ', start + 1)
  return markdown.slice(start, end < 0 ? undefined : end)
}

/** Every Markdown file of the project, outside what is installed or built. */
const markdownFiles = (dir = root): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
  if (['node_modules', 'dist', '.git', '.tap', '.tsbuild', 'data'].includes(entry.name)) return []
  const path = join(dir, entry.name)
  if (entry.isDirectory()) return markdownFiles(path)
  return entry.name.endsWith('.md') ? [path] : []
})

/** The anchors GitHub gives a file's headings. */
const anchorsOf = (markdown: string): Set<string> => new Set(
  [...markdown.matchAll(/^#+ (.+)$/gm)].map(([, title]) =>
    (title as string).trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-'))
)

// docs/API.md against what the service serves: packages/http/test/contract.test.ts.

t.test('every link of the project\'s documents points to a file inside it, and to a heading it has', async (t) => {
  const files = markdownFiles()
  t.ok(files.length >= 10)
  for (const file of files) {
    const text = readFileSync(file, 'utf8')
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^(https?|mailto):/.test(target as string)) continue
      const [path = '', anchor] = (target as string).split('#')
      const linked = path === '' ? file : resolve(dirname(file), path)
      const where = `${relative(root, file)} → ${target}`
      t.ok(linked.startsWith(root.endsWith(sep) ? root : root + sep) && existsSync(linked), `${where}: a file of the repository`)
      if (anchor !== undefined && linked.endsWith('.md') && existsSync(linked)) {
        t.ok(anchorsOf(readFileSync(linked, 'utf8')).has(anchor), `${where}: a heading of that file`)
      }
    }
  }
})

t.test('the README\'s configuration table and .env.example name every variable the server reads, and those of the contract', async (t) => {
  const config = read('packages/server/src/config.ts')
  const readByServer = new Set([...config.matchAll(/\benv\.([A-Z][A-Z0-9_]+)|\(env, '([A-Z][A-Z0-9_]+)'/g)].map(([, a, b]) => (a ?? b) as string))
  t.ok(readByServer.size >= 20, [...readByServer].join(' '))
  const fromContract = [...section(read('docs/API.md'), 'Running').matchAll(/^\| (.+?) \|/gm)].flatMap(([, cell]) => [...(cell as string).matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map(([, name]) => name as string))
  t.ok(fromContract.includes('METRICS_TOKEN') && fromContract.includes('GRAPHQL_MAX_SUBSCRIPTIONS'))
  const table = section(README, 'Configuration')
  const example = read('.env.example')
  for (const name of new Set([...readByServer, ...fromContract])) {
    t.match(table, new RegExp(`^\\|[^|\\n]*\`${name}\``, 'm'), `${name} has a row in the README`)
    t.match(example, new RegExp(`^${name}=`, 'm'), `${name} is in .env.example`)
  }
})

t.test('the README keeps its two commands and says why each dependency is there', async (t) => {
  t.match(README, 'npm install && npm start')
  t.match(README, 'npm install && npm test')
  const why = section(README, 'Why each dependency is there')
  const manifests = ['package.json', ...readdirSync(join(root, 'packages')).map((name) => `packages/${name}/package.json`)]
  for (const manifest of manifests) {
    const { dependencies = {}, devDependencies = {} } = JSON.parse(read(manifest)) as Record<string, Record<string, string> | undefined>
    for (const name of Object.keys({ ...dependencies, ...devDependencies })) {
      if (name.startsWith('@people-service/') || name.startsWith('@types/')) continue
      t.match(why, `\`${name}\``, `${manifest}: ${name}`)
    }
  }
})
