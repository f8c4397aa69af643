import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const root = fileURLToPath(new URL('../../..', import.meta.url))
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
const { scripts } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> }

/** The TypeScript projects the compile step of an npm script builds, as tsc lists them. */
const projectsBuiltBy = (script: string): string[] => {
  const build = /^tsc (-b[^&]*?)\s*(&&|$)/.exec(scripts[script] ?? '')
  if (build === null) throw new Error(`npm run ${script} does not start with a tsc build: ${scripts[script]}`)
  const listing = execFileSync(process.execPath, [tsc, ...(build[1] as string).split(/\s+/), '--dry', '--verbose'], { cwd: root, encoding: 'utf8' })
  const list = listing.slice(listing.indexOf('Projects in this build:'), listing.indexOf('\n\n', listing.indexOf('Projects in this build:')))
  return [...list.matchAll(/\* (\S+)/g)].map(([, project]) => project as string)
}

t.test('start, build, dev, seed, migrate and admin compile the sources the server runs, never the tests; npm test checks everything', async (t) => {
  const sources = ['packages/domain/tsconfig.json', 'packages/infra/tsconfig.json', 'packages/http/tsconfig.json', 'packages/server/tsconfig.json']
  for (const script of ['start', 'build', 'dev', 'seed', 'migrate', 'admin']) t.same(projectsBuiltBy(script), sources, `npm run ${script}`)
  const everything = projectsBuiltBy('test')
  t.ok(sources.every((project) => everything.includes(project)))
  t.ok(everything.some((project) => project.endsWith('test/tsconfig.json')), 'npm test type-checks the tests')
})
