import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { buildSchema, parse, type OperationDefinitionNode } from 'graphql'
import t from 'tap'
import type { GraphQLContext } from '../src/graphql/context.js'
import { GRAPHQL_LIMITS, selectionsOf } from '../src/graphql/limits.js'
import { compiledBytesOf, QueryCompiler, ResolverPlan } from '../src/graphql/plan.js'
import { schema as typeDefs } from '../src/graphql/schema.js'
import { build, gqlData } from './helper.js'

/*
 * graphql-jit compiles an operation into a function that grows with its
 * selections, fragments counted where spread (plan.ts). A review's 2 KB
 * document of fragments spread to 7,480 selections held the event loop
 * 0.3–0.7 s as it compiled and kept some 40 MB, each new such document
 * again: past jitMaxSelections an operation runs interpreted, and the
 * compiled ones take a bounded heap.
 */

const schema = buildSchema(typeDefs)

/** Fragments down to `depth`, each person spreading its friends' and messages' fragments: selections grow fast with depth. */
const fragmentChain = (depth: number, roots = 1, variant = ''): string => {
  const fragments: string[] = []
  for (let level = 1; level <= depth; level++) {
    const below = level === 1 ? '' : ` friends(limit: 0) { ...P${level - 1} } messages(limit: 1) { ...M${level - 1} }`
    // The roots spread M<depth>, which spreads P<depth - 1>: P<depth> and M<depth - 1> would go unused.
    if (level < depth) fragments.push(`fragment P${level} on Person { id name age email${below} }`)
    if (level !== depth - 1) fragments.push(`fragment M${level} on Message { id text sentAt${level === 1 ? '' : ` person { ...P${level - 1} }`} }`)
  }
  const fields = Array.from({ length: roots }, (_, i) => `r${i}: message(id: "${variant}${i}") { ...M${depth} }`).join(' ')
  return `{ ${fields} }\n${fragments.join('\n')}`
}

const planOf = (source: string, compiler: QueryCompiler) => {
  const document = parse(source)
  const operation = document.definitions[0] as OperationDefinitionNode
  return new ResolverPlan(schema, document, undefined, selectionsOf(document, operation), compiler)
}

// No resolvers are reached: every root field answers null.
const context = {} as GraphQLContext

t.test('an operation of more than jitMaxSelections selections is never compiled; a smaller one is, once it has run `after` times', async (t) => {
  const compiler = new QueryCompiler(1)
  const big = planOf(fragmentChain(9, 10), compiler)
  const small = planOf(fragmentChain(3), compiler)
  t.ok(big.selections > GRAPHQL_LIMITS.jitMaxSelections, `${big.selections} selections`)
  t.ok(small.selections <= GRAPHQL_LIMITS.jitMaxSelections, `${small.selections} selections`)
  for (let run = 1; run <= 3; run++) {
    await big.run(context, {})
    await small.run(context, {})
    t.equal(compiler.get(big), undefined, `run ${run}: the big one runs interpreted`)
    t.equal(compiler.get(small) !== undefined, run >= 2, `run ${run}: the small one ${run >= 2 ? 'is' : 'is not yet'} compiled`)
  }
})

t.test('compiled operations take a bounded heap: past it the least recently run goes back to being interpreted, for good', async (t) => {
  const one = planOf(fragmentChain(3, 1, 'a'), new QueryCompiler(0))
  // Room for two operations of this size.
  const compiler = new QueryCompiler(0, 2 * compiledBytesOf(one.selections))
  const plans = ['a', 'b', 'c'].map((variant) => planOf(fragmentChain(3, 1, variant), compiler))
  for (const plan of plans) await plan.run(context, {})
  t.same(plans.map((plan) => compiler.get(plan) !== undefined), [false, true, true], 'the first compiled is let go')
  await plans[0]!.run(context, {})
  t.equal(compiler.get(plans[0]!), undefined, 'and is not compiled again')
})

t.test('a compiled operation keeps nothing alive: once its plan (its document) is let go, both are collected', async (t) => {
  setFlagsFromString('--expose-gc')
  const collect = runInNewContext('gc') as () => void
  const compiler = new QueryCompiler(0)
  const plans = Array.from({ length: 20 }, (_, i) => planOf(fragmentChain(3, 1, `gone${i}`), compiler))
  for (const plan of plans) await plan.run(context, {})
  t.ok(plans.every((plan) => compiler.get(plan) !== undefined), 'compiled')
  const refs = plans.map((plan) => new WeakRef(plan))
  plans.length = 0
  // The document cache letting the documents go: nothing else holds their
  // plans. A WeakRef made or read keeps its target until the turn ends:
  // collected on the next turns, then read.
  for (let i = 0; i < 3; i++) {
    await new Promise((resolve) => setImmediate(resolve))
    collect()
  }
  await new Promise((resolve) => setImmediate(resolve))
  const alive = refs.filter((ref) => ref.deref() !== undefined).length
  // V8 may hold on to the last one made a while longer, compiled or not; held by the budget, all 20 stayed.
  t.ok(alive <= 1, `every plan, with its document and compiled function, is gone (${alive} of 20 alive)`)
})

t.test('through the app: the big document runs twice at the cost of interpreting it, and answers alike', async (t) => {
  // Its 10 roots read 10 texts: over the default cost budget, which this is not about.
  const { api } = await build(t, { graphqlJit: 1, graphqlMaxCost: 10_000 })
  const source = fragmentChain(9, 10)
  const first = await gqlData(api, source)
  const started = process.cpuUsage()
  const second = await gqlData(api, source)
  const { user, system } = process.cpuUsage(started)
  t.same(second, first)
  // Compiling it took 250–700 ms; interpreted it takes a few.
  t.ok((user + system) / 1000 < 100, `the second run took ${Math.round((user + system) / 1000)} ms of CPU`)
})
