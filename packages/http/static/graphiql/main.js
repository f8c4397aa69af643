/* global React, ReactDOM, GraphiQL */
// Starts GraphiQL against this service's /graphql. Every script the page runs
// is served by the service itself, so the editor works with no internet access
// and under a Content-Security-Policy of script-src 'self'.
const url = new URL('graphql', window.location.href)
const subscriptionUrl = new URL(url.href)
subscriptionUrl.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:'
const fetcher = GraphiQL.createFetcher({ url: url.href, subscriptionUrl: subscriptionUrl.href })

ReactDOM.createRoot(document.getElementById('graphiql')).render(
  React.createElement(GraphiQL, {
    fetcher,
    // Every operation needs credentials: say where they go. Headers are not
    // persisted, so a token typed here does not outlive the tab.
    defaultHeaders: '{\n  "Authorization": "Bearer <access_token from POST /auth/login>"\n}',
    headerEditorEnabled: true,
    shouldPersistHeaders: false,
    defaultEditorToolsVisibility: 'headers',
    defaultQuery: '# Put an access token, or an API key as "X-API-Key", in the headers below, then run:\n{\n  people(limit: 5) {\n    id\n    name\n  }\n}\n'
  })
)
