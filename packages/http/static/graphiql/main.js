/* global React, ReactDOM, GraphiQL */
// Starts GraphiQL against this service's /graphql. Every script the page runs
// is served by the service itself, so the editor works with no internet access
// and under a Content-Security-Policy of script-src 'self'.
const url = new URL('graphql', window.location.href)
const subscriptionUrl = new URL(url.href)
subscriptionUrl.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:'

const PLACEHOLDER = '<access_token from POST /auth/login>'
const DEFAULT_HEADERS = `{\n  "Authorization": "Bearer ${PLACEHOLDER}"\n}`
// Header edits settle before the schema is asked for again: not one
// introspection (charged to the caller's budget) per keystroke.
const SETTLE_MS = 500

// The credentials the headers hold, as one string ('' when none): the
// Authorization and X-API-Key values, placeholders left out.
const credentialsOf = (text) => {
  let headers
  try {
    headers = JSON.parse(text)
  } catch {
    return ''
  }
  if (typeof headers !== 'object' || headers === null) return ''
  return Object.entries(headers)
    .filter(([name, value]) => /^(authorization|x-api-key)$/i.test(name) && typeof value === 'string' && !/<[^>]*>/.test(value) && value.trim() !== '' && value.trim() !== 'Bearer')
    .map(([name, value]) => `${name.toLowerCase()}:${value.trim()}`)
    .sort()
    .join('\n')
}

const Editor = () => {
  const [credentials, setCredentials] = React.useState(() => credentialsOf(DEFAULT_HEADERS))
  const timer = React.useRef(undefined)
  const onEditHeaders = React.useCallback((text) => {
    clearTimeout(timer.current)
    timer.current = setTimeout(() => setCredentials(credentialsOf(text)), SETTLE_MS)
  }, [])
  // A new fetcher whenever the credentials change: GraphiQL asks for the
  // schema again with the headers as they are then (docs, autocomplete).
  const fetcher = React.useMemo(
    () => GraphiQL.createFetcher({ url: url.href, subscriptionUrl: subscriptionUrl.href }),
    [credentials]
  )
  return React.createElement(GraphiQL, {
    fetcher,
    // No credentials yet: no schema asked for, so no 401 in the result pane
    // before anything ran; undefined lets GraphiQL introspect.
    schema: credentials === '' ? null : undefined,
    onEditHeaders,
    // Every operation needs credentials: say where they go. Headers are not
    // persisted, so a token typed here does not outlive the tab.
    defaultHeaders: DEFAULT_HEADERS,
    headerEditorEnabled: true,
    shouldPersistHeaders: false,
    defaultEditorToolsVisibility: 'headers',
    defaultQuery: '# Put an access token, or an API key as "X-API-Key", in the headers below, then run:\n{\n  people(limit: 5) {\n    id\n    name\n  }\n}\n'
  })
}

ReactDOM.createRoot(document.getElementById('graphiql')).render(React.createElement(Editor))
