/**
 * Log paths pino must censor: credentials in request headers wherever a
 * request or its headers are logged, and passwords in any logged body.
 */
export const REDACTED_LOG_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'request.headers.authorization',
  'request.headers["x-api-key"]',
  'headers.authorization',
  'headers["x-api-key"]',
  'body.password',
  'req.body.password',
  // POST /auth/password
  'body.currentPassword',
  'body.newPassword',
  'req.body.currentPassword',
  'req.body.newPassword'
]
